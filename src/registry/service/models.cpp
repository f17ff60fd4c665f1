#include "registry/service/models.hpp"

#include "registry/repo/hf_commits.hpp"
#include "registry/repo/model_search.hpp"
#include "registry/repo/model_view_index.hpp"

namespace depot::registry::model_queries {

asio::awaitable<std::vector<model>> find_models(pg::pool& pool, std::int64_t team_id,
                                                const model_filter& filter, std::string_view after,
                                                std::size_t limit)
{
    return registry::find_models(pool, team_id, filter, after, limit);
}

asio::awaitable<std::vector<model_version>>
find_versions(pg::pool& pool, std::int64_t model_id, const label_match& label, int before, std::size_t limit)
{
    return registry::find_versions(pool, model_id, label, before, limit);
}

asio::awaitable<std::string> version_commit(pg::pool& pool, std::int64_t model_id, std::int64_t version_id)
{
    return registry::version_commit(pool, model_id, version_id);
}

asio::awaitable<std::optional<int>> version_of_commit(pg::pool& pool, std::int64_t model_id,
                                                      std::string_view commit)
{
    return registry::version_of_commit(pool, model_id, commit);
}

// model_view_index holds only the pool: one per call, alive across the call's suspension points.
asio::awaitable<std::vector<view_node>> view_teams(pg::pool& pool, std::string_view user_id, bool is_admin,
                                                   const view_cursor& from, std::size_t limit)
{
    model_view_index index(pool);
    co_return co_await index.teams(user_id, is_admin, from, limit);
}

asio::awaitable<std::vector<view_node>> view_models(pg::pool& pool, std::int64_t team_id,
                                                    const view_cursor& from, std::size_t limit)
{
    model_view_index index(pool);
    co_return co_await index.models(team_id, from, limit);
}

asio::awaitable<std::vector<view_ref>> view_refs(pg::pool& pool, std::int64_t model_id,
                                                 const view_cursor& from, std::size_t limit)
{
    model_view_index index(pool);
    co_return co_await index.refs(model_id, from, limit);
}

} // namespace depot::registry::model_queries
