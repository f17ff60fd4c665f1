// The SQL of model aliases (registry/repo/model_aliases.hpp).
#include "registry/repo/model_aliases.hpp"

#include "registry/repo/sql_util.hpp"

namespace depot::registry {

asio::awaitable<std::vector<model_alias>> aliases_of(pg::connection& c, std::int64_t model_id)
{
    auto rs = co_await sql(
        c,
        "SELECT a.name, v.number, a.updated_by, " DEPOT_MS(
            "a.updated_at") ", a.id FROM model_aliases a JOIN model_versions v ON v.id = a.version_id "
                            "WHERE a.model_id = $1 ORDER BY a.name",
        model_id);
    std::vector<model_alias> out;
    for (auto r : rs)
        out.push_back(model_alias{.id = r.i64(4),
                                  .name = r.str(0),
                                  .version = static_cast<int>(r.i64(1)),
                                  .updated_by = r.str(2),
                                  .updated_at = from_millis(r.i64(3))});
    co_return out;
}

asio::awaitable<std::optional<model_alias>> lock_alias(pg::connection& c, std::int64_t model_id,
                                                       std::string_view name)
{
    auto rs = co_await sql(c,
                           "SELECT v.number, a.updated_by, " DEPOT_MS(
                               "a.updated_at") ", a.id FROM model_aliases a JOIN model_versions v ON v.id = "
                                               "a.version_id WHERE a.model_id = $1 AND a.name = $2 "
                                               "FOR UPDATE OF a",
                           model_id, name);
    if (rs.empty())
        co_return std::nullopt;
    co_return model_alias{.id = rs[0].i64(3),
                          .name = std::string(name),
                          .version = static_cast<int>(rs[0].i64(0)),
                          .updated_by = rs[0].str(1),
                          .updated_at = from_millis(rs[0].i64(2))};
}

asio::awaitable<std::optional<std::string>> share_version_state(pg::connection& c, std::int64_t version_id)
{
    auto state = co_await sql(c, "SELECT state FROM model_versions WHERE id = $1 FOR SHARE", version_id);
    if (state.empty())
        co_return std::nullopt;
    co_return state[0].str(0);
}

asio::awaitable<bool> is_version_label(pg::connection& c, std::int64_t model_id, std::string_view name)
{
    auto label =
        co_await sql(c, "SELECT 1 FROM model_versions WHERE model_id = $1 AND label = $2", model_id, name);
    co_return !label.empty();
}

asio::awaitable<std::optional<deleted_alias>> delete_alias_row(pg::connection& c, std::int64_t model_id,
                                                               std::string_view name)
{
    auto rs = co_await sql(c,
                           "DELETE FROM model_aliases a USING model_versions v WHERE a.model_id = $1 AND "
                           "a.name = $2 AND v.id = a.version_id RETURNING v.id, v.number",
                           model_id, name);
    if (rs.empty())
        co_return std::nullopt;
    co_return deleted_alias{.version_id = rs[0].i64(0), .number = static_cast<int>(rs[0].i64(1))};
}

} // namespace depot::registry
