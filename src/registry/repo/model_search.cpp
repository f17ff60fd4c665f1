// Filtered model and version lists (registry/repo/model_search.hpp).
#include "registry/repo/model_search.hpp"

#include "registry/repo/model_detail.hpp"
#include "registry/repo/sql_util.hpp"

namespace depot::registry {
using namespace model_detail;

asio::awaitable<std::vector<model>> find_models(pg::pool& pool, std::int64_t team_id,
                                                const model_filter& filter, std::string_view after,
                                                std::size_t limit)
{
    const bool by_label = filter.label.has_value();
    const std::string key = by_label ? filter.label->key : std::string();
    const std::string value = by_label ? filter.label->value : std::string();
    auto conn = co_await pool.acquire();
    // strpos, not LIKE: the name part is literal text ('%' and '_' mean themselves).
    auto rs = co_await sql(
        *conn,
        std::string(model_select) +
            "WHERE m.team_id = $1 AND m.name > $2 AND ($3 = '' OR strpos(m.name, lower($3)) > 0) "
            "AND (NOT $4 OR EXISTS (SELECT 1 FROM model_versions v WHERE v.model_id = m.id AND "
            "v.labels ->> $5 = $6)) ORDER BY m.name LIMIT $7",
        team_id, after, filter.name_contains, by_label, key, value, static_cast<std::int64_t>(limit));
    std::vector<model> out;
    for (auto r : rs)
        out.push_back(model_of(r));
    co_return out;
}

asio::awaitable<std::vector<model_version>>
find_versions(pg::pool& pool, std::int64_t model_id, const label_match& label, int before, std::size_t limit)
{
    auto conn = co_await pool.acquire();
    auto rs = co_await sql(*conn,
                           std::string(version_select) +
                               "WHERE v.model_id = $1 AND ($2 = 0 OR v.number < $2) AND v.labels ->> $3 = $4 "
                               "ORDER BY v.number DESC LIMIT $5",
                           model_id, before, label.key, label.value, static_cast<std::int64_t>(limit));
    std::vector<model_version> out;
    for (auto r : rs)
        out.push_back(version_of(r));
    co_return out;
}

} // namespace depot::registry
