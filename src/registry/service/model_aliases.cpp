// model_registry: aliases (names pointing at versions), with If-Match preconditions.
#include "registry/repo/model_aliases.hpp"

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
    co_return co_await aliases_of(*conn, model_id);
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
    const auto locked = co_await lock_alias(c, model_id, name);
    if (!if_match)
        co_return ok();
    if (!locked)
        co_return make_error(errc::precondition_failed,
                             "If-Match: the alias '" + std::string(name) + "' does not exist");
    const model_alias& current = *locked;
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
        const auto state = co_await share_version_state(c, v.id);
        if (!state)
            co_return make_error(errc::not_found, "No such version");
        const std::string s = *state;
        if (s == "archived")
            co_return make_error(errc::conflict, "An alias cannot point at an archived version");
        if (is_protected && s != "approved")
            co_return make_error(errc::conflict,
                                 "The alias '" + std::string(name) +
                                     "' is protected: it can only point at an approved version "
                                     "(version " +
                                     std::to_string(v.number) + " is " + s + ")");
        if (co_await is_version_label(c, m.id, name))
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
        const auto deleted = co_await delete_alias_row(c, m.id, name);
        if (!deleted)
            co_return make_error(errc::not_found, "No such alias");
        const std::string from = std::to_string(deleted->number);
        co_await record(c, m.id, deleted->version_id, "alias_deleted", who, "", std::nullopt, std::nullopt,
                        alias_details(name, from, std::nullopt));
        const std::string data =
            event_data(m, who, ",\"alias\":" + events::quote(name) + ",\"from\":" + from + ",\"to\":null");
        co_await events::emit_model_event(c, "alias.updated", m.team_id, m.id, m.bucket_id, std::nullopt,
                                          data);
        co_return ok();
    };
    co_return co_await transact(pool_, work);
}

} // namespace depot::registry
