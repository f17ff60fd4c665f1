// model_registry: aliases (names pointing at versions), with If-Match preconditions.
#include "registry/repo/events.hpp"
#include "registry/repo/model_detail.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/service/model_registry.hpp"
#include "registry/transaction.hpp"

namespace depot::registry {
using namespace model_detail;

// --- aliases ---------------------------------------------------------------------------------------------

asio::awaitable<std::vector<model_alias>> model_registry::aliases(std::int64_t model_id)
{
    auto conn = co_await pool_.acquire();
    auto rs =
        co_await sql(*conn,
                     "SELECT a.name, v.number, a.updated_by, " DEPOT_MS(
                         "a.updated_at") " FROM model_aliases a JOIN model_versions v ON v.id = a.version_id "
                                         "WHERE a.model_id = $1 ORDER BY a.name",
                     model_id);
    std::vector<model_alias> out;
    for (auto r : rs)
        out.push_back(model_alias{.name = r.str(0),
                                  .version = static_cast<int>(r.i64(1)),
                                  .updated_by = r.str(2),
                                  .updated_at = from_millis(r.i64(3))});
    co_return out;
}

std::string alias_etag(const model_alias& a)
{
    return "\"" + std::to_string(a.version) + "-" +
           std::to_string(
               std::chrono::duration_cast<std::chrono::milliseconds>(a.updated_at.time_since_epoch())
                   .count()) +
           "\"";
}

namespace {

/// Inside a transaction: locks alias `name` and checks an If-Match precondition against it.
asio::awaitable<result<void>> check_alias_precondition(pg::connection& c, std::int64_t model_id,
                                                       std::string_view name,
                                                       const std::optional<std::string>& if_match)
{
    auto rs = co_await sql(c,
                           "SELECT v.number, a.updated_by, " DEPOT_MS(
                               "a.updated_at") " FROM model_aliases a JOIN model_versions v ON v.id = "
                                               "a.version_id WHERE a.model_id = $1 AND a.name = $2 "
                                               "FOR UPDATE OF a",
                           model_id, name);
    if (!if_match)
        co_return ok();
    if (rs.empty())
        co_return make_error(errc::precondition_failed,
                             "If-Match: the alias '" + std::string(name) + "' does not exist");
    const model_alias current{.name = std::string(name),
                              .version = static_cast<int>(rs[0].i64(0)),
                              .updated_by = rs[0].str(1),
                              .updated_at = from_millis(rs[0].i64(2))};
    std::string_view wanted = *if_match;
    if (wanted.starts_with("W/"))
        wanted.remove_prefix(2);
    if (wanted != "*" && wanted != alias_etag(current))
        co_return make_error(errc::precondition_failed,
                             "If-Match: the alias '" + std::string(name) + "' moved since it was read (now " +
                                 alias_etag(current) + ", version " + std::to_string(current.version) + ")");
    co_return ok();
}

} // namespace

asio::awaitable<result<model_alias>> model_registry::set_alias(const model& m, std::string_view name,
                                                               const model_version& v,
                                                               const audit_context& who,
                                                               std::optional<std::string> if_match)
{
    const bool is_protected = m.policy.protects(name);
    auto work = [&](pg::connection& c) -> asio::awaitable<result<model_alias>> {
        co_await events::lock_model(c, m.id);
        auto precondition = co_await check_alias_precondition(c, m.id, name, if_match);
        if (!precondition)
            co_return std::move(precondition).error();
        auto state = co_await sql(c, "SELECT state FROM model_versions WHERE id = $1 FOR SHARE", v.id);
        if (state.empty())
            co_return make_error(errc::not_found, "No such version");
        const std::string s = state[0].str(0);
        if (s == "archived")
            co_return make_error(errc::conflict, "An alias cannot point at an archived version");
        if (is_protected && s != "approved")
            co_return make_error(errc::conflict,
                                 "The alias '" + std::string(name) +
                                     "' is protected: it can only point at an approved version "
                                     "(version " +
                                     std::to_string(v.number) + " is " + s + ")");
        auto label =
            co_await sql(c, "SELECT 1 FROM model_versions WHERE model_id = $1 AND label = $2", m.id, name);
        if (!label.empty())
            co_return make_error(errc::conflict,
                                 "'" + std::string(name) + "' is a version label of this model");
        const auto updated_at = co_await move_alias(c, m, name, v.id, v.number, who);
        co_return model_alias{.name = std::string(name),
                              .version = v.number,
                              .updated_by = std::string(who.actor),
                              .updated_at = from_millis(updated_at)};
    };
    co_return co_await transact(pool_, work);
}

asio::awaitable<result<void>> model_registry::delete_alias(const model& m, std::string_view name,
                                                           const audit_context& who,
                                                           std::optional<std::string> if_match)
{
    auto work = [&](pg::connection& c) -> asio::awaitable<result<void>> {
        co_await events::lock_model(c, m.id);
        auto precondition = co_await check_alias_precondition(c, m.id, name, if_match);
        if (!precondition)
            co_return std::move(precondition).error();
        auto rs = co_await sql(c,
                               "DELETE FROM model_aliases a USING model_versions v WHERE a.model_id = $1 AND "
                               "a.name = $2 AND v.id = a.version_id RETURNING v.id, v.number",
                               m.id, name);
        if (rs.empty())
            co_return make_error(errc::not_found, "No such alias");
        co_await record(c, m.id, rs[0].i64(0), "alias_deleted", who, "", std::nullopt, std::nullopt,
                        alias_details(name, rs[0].str(1), std::nullopt));
        const std::string data = event_data(
            m, who, ",\"alias\":" + events::quote(name) + ",\"from\":" + rs[0].str(1) + ",\"to\":null");
        co_await events::emit_model_event(c, "alias.updated", m.team_id, m.id, m.bucket_id, std::nullopt,
                                          data);
        co_return ok();
    };
    co_return co_await transact(pool_, work);
}

} // namespace depot::registry
