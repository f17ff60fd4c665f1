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

asio::awaitable<bool> alias_has_file(pg::pool& pool, std::int64_t model_id, std::string_view alias,
                                     std::string_view path)
{
    auto conn = co_await pool.acquire();
    auto rs = co_await sql(*conn,
                           "SELECT 1 FROM model_aliases a JOIN model_files f ON f.version_id = a.version_id "
                           "WHERE a.model_id = $1 AND a.name = $2 AND f.path = $3",
                           model_id, alias, path);
    co_return !rs.empty();
}

} // namespace depot::registry
