// model_registry: teams and their members' roles.
#include "registry/repo/model_teams.hpp"

#include "registry/repo/audit.hpp"
#include "registry/service/model_registry.hpp"
#include "registry/transaction.hpp"

namespace depot::registry {
namespace {

/// Why a subscription stopped: what a team admin set up stops speaking for the team (and receiving its
/// presigned links) once they are not its admin. Another admin may enable it again.
constexpr std::string_view no_longer_admin = "its creator is no longer an admin of the team";

/// A membership change's audit details: `members` (a JSON object's members, or "") and
/// `"webhooks_disabled":[ids]` when it disabled any.
std::string member_details(std::string members, const std::vector<std::int64_t>& disabled)
{
    if (!disabled.empty()) {
        members += members.empty() ? "\"webhooks_disabled\":[" : ",\"webhooks_disabled\":[";
        for (std::size_t i = 0; i < disabled.size(); ++i)
            members += (i ? "," : "") + std::to_string(disabled[i]);
        members += "]";
    }
    return "{" + members + "}";
}

} // namespace

// --- teams -----------------------------------------------------------------------------------------------

asio::awaitable<result<team>> model_registry::create_team(const audit_context& who, std::string name,
                                                          approval_policy defaults)
{
    co_return co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<team>> {
        auto created = co_await insert_team(c, name, defaults);
        if (!created)
            co_return make_error(errc::already_exists, "A team named '" + name + "' already exists");
        co_await append_audit(c, who, "team.create", name, name);
        co_return std::move(*created);
    });
}

asio::awaitable<std::vector<team>> model_registry::teams_of(std::string_view user_id, bool is_admin)
{
    auto conn = co_await pool_.acquire();
    co_return co_await teams_with_member(*conn, user_id, is_admin);
}

asio::awaitable<result<team>> model_registry::get_team(std::string_view name)
{
    auto conn = co_await pool_.acquire();
    auto found = co_await find_team(*conn, name);
    if (!found)
        co_return make_error(errc::not_found, "No such team");
    co_return std::move(*found);
}

asio::awaitable<std::optional<team_role>> model_registry::role_of(std::int64_t team_id,
                                                                  std::string_view user_id)
{
    auto conn = co_await pool_.acquire();
    co_return co_await member_role(*conn, team_id, user_id);
}

asio::awaitable<std::vector<team_member>> model_registry::members(std::int64_t team_id)
{
    auto conn = co_await pool_.acquire();
    co_return co_await team_members(*conn, team_id);
}

asio::awaitable<result<team_member>> model_registry::set_member(const audit_context& who,
                                                                std::int64_t team_id,
                                                                std::string_view user_id, team_role role)
{
    if (user_id.starts_with(event_link_user_prefix))
        co_return make_error(errc::invalid_argument, "'" + std::string(user_id) +
                                                         "' is depotd's own account (the signer of a team's "
                                                         "event links) and joins no team by request");
    co_return co_await put_member(who, team_id, user_id, role);
}

asio::awaitable<result<team_member>> model_registry::admit_event_link_user(std::int64_t team_id,
                                                                           std::string_view team_name)
{
    co_return co_await put_member(system_audit_context(), team_id,
                                  std::string(event_link_user_prefix) + std::string(team_name),
                                  team_role::reader);
}

asio::awaitable<result<team_member>> model_registry::put_member(const audit_context& who,
                                                                std::int64_t team_id,
                                                                std::string_view user_id, team_role role)
{
    co_return co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<team_member>> {
        auto display_name = co_await display_name_of_user(c, user_id);
        if (!display_name)
            co_return make_error(errc::not_found, "No such user");
        const auto row = co_await upsert_member(c, team_id, user_id, role);
        std::vector<std::int64_t> disabled;
        if (role != team_role::admin)
            disabled = co_await disable_subscriptions_of(c, team_id, user_id, no_longer_admin);
        co_await append_audit(c, who, "team.member.set", row.team_name + "/" + std::string(user_id),
                              row.team_name,
                              member_details("\"role\":" + audit_quote(to_string(role)), disabled));
        co_return team_member{.user_id = std::string(user_id),
                              .display_name = std::move(*display_name),
                              .role = role,
                              .added_at = row.added_at};
    });
}

asio::awaitable<result<void>> model_registry::remove_member(const audit_context& who, std::int64_t team_id,
                                                            std::string_view user_id)
{
    // Nothing but depotd adds a signer back: removed, the team's links would stop for good.
    if (user_id.starts_with(event_link_user_prefix))
        co_return make_error(
            errc::invalid_argument,
            "'" + std::string(user_id) +
                "' is depotd's own account (the signer of the team's event links) and "
                "stays a reader of its team: revoke its key to invalidate the links it signed");
    co_return co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
        const auto team_name = co_await delete_member(c, team_id, user_id);
        if (!team_name)
            co_return make_error(errc::not_found, "The user is not a member of this team");
        const auto disabled = co_await disable_subscriptions_of(c, team_id, user_id, no_longer_admin);
        co_await append_audit(c, who, "team.member.remove", *team_name + "/" + std::string(user_id),
                              *team_name, member_details("", disabled));
        co_return ok();
    });
}

} // namespace depot::registry
