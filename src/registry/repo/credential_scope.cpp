#include "registry/repo/credential_scope.hpp"

#include "registry/repo/sql_util.hpp"

namespace depot::registry {

asio::awaitable<std::optional<model_location>> locate_model(pg::pool& pool, std::string_view team,
                                                            std::string_view model)
{
    auto conn = co_await pool.acquire();
    auto rs = co_await sql(*conn,
                           "SELECT m.id, b.name, m.prefix FROM models m JOIN teams t ON t.id = m.team_id "
                           "JOIN buckets b ON b.id = m.bucket_id WHERE t.name = $1 AND m.name = $2",
                           team, model);
    if (rs.empty())
        co_return std::nullopt;
    co_return model_location{.model_id = rs[0].i64(0), .bucket = rs[0].str(1), .prefix = rs[0].str(2)};
}

asio::awaitable<bool> alias_has_file(pg::pool& pool, std::int64_t model_id, std::int64_t alias_id,
                                     std::string_view path)
{
    auto conn = co_await pool.acquire();
    auto rs = co_await sql(*conn,
                           "SELECT 1 FROM model_aliases a JOIN model_files f ON f.version_id = a.version_id "
                           "JOIN model_versions v ON v.id = a.version_id "
                           "WHERE a.model_id = $1 AND a.id = $2 AND f.path = $3 AND v.state <> 'archived'",
                           model_id, alias_id, path);
    co_return !rs.empty();
}

asio::awaitable<std::optional<std::int64_t>> alias_id_of(pg::pool& pool, std::string_view team,
                                                         std::string_view model, std::string_view alias)
{
    auto conn = co_await pool.acquire();
    auto rs =
        co_await sql(*conn,
                     "SELECT a.id FROM model_aliases a JOIN models m ON m.id = a.model_id JOIN teams t ON "
                     "t.id = m.team_id WHERE t.name = $1 AND m.name = $2 AND a.name = $3",
                     team, model, alias);
    if (rs.empty())
        co_return std::nullopt;
    co_return rs[0].i64(0);
}

} // namespace depot::registry
