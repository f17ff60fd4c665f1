// The SQL of teams and their members (registry/repo/model_teams.hpp).
#include "registry/repo/model_teams.hpp"

#include "registry/repo/model_detail.hpp"
#include "registry/repo/sql_util.hpp"

#include <algorithm>

namespace depot::registry {
using namespace model_detail;

namespace {

constexpr const char* team_columns = "t.id, t.name, " DEPOT_MS(
    "t.created_at") ", t.required_approvals, t.approver_role, t.protected_aliases::text, t.four_eyes";

team team_of(const pg::row& r)
{
    team t{.id = r.i64(0),
           .name = r.str(1),
           .created_at = from_millis(r.i64(2)),
           .default_policy = policy_of(r, 3)};
    t.default_policy.four_eyes = four_eyes_rule_of(r.text(6)).value_or(four_eyes_rule::author_and_submitter);
    return t;
}

} // namespace

asio::awaitable<std::optional<team>> insert_team(pg::connection& c, std::string_view name,
                                                 const approval_policy& defaults)
{
    auto rs = co_await sql(c,
                           std::string("INSERT INTO teams AS t (name, required_approvals, approver_role, "
                                       "protected_aliases, four_eyes) VALUES ($1, $2, $3, $4::text[], $5) "
                                       "ON CONFLICT (name) DO NOTHING RETURNING ") +
                               team_columns,
                           name, defaults.required_approvals, to_string(defaults.approver_role),
                           text_array(defaults.protected_aliases), to_string(defaults.four_eyes));
    if (rs.empty())
        co_return std::nullopt;
    co_return team_of(rs[0]);
}

asio::awaitable<std::vector<team>> teams_with_member(pg::connection& c, std::string_view user_id, bool all)
{
    auto rs = co_await sql(c,
                           std::string("SELECT ") + team_columns +
                               " FROM teams t WHERE $2 OR EXISTS (SELECT 1 FROM team_members m "
                               "WHERE m.team_id = t.id AND m.user_id = $1) ORDER BY t.name",
                           user_id, all);
    std::vector<team> out;
    for (auto r : rs)
        out.push_back(team_of(r));
    co_return out;
}

asio::awaitable<std::optional<team>> find_team(pg::connection& c, std::string_view name)
{
    auto rs =
        co_await sql(c, std::string("SELECT ") + team_columns + " FROM teams t WHERE t.name = $1", name);
    if (rs.empty())
        co_return std::nullopt;
    co_return team_of(rs[0]);
}

asio::awaitable<std::optional<team_role>> member_role(pg::connection& c, std::int64_t team_id,
                                                      std::string_view user_id)
{
    auto rs = co_await sql(c, "SELECT role FROM team_members WHERE team_id = $1 AND user_id = $2", team_id,
                           user_id);
    if (rs.empty())
        co_return std::nullopt;
    co_return team_role_of(rs[0].text(0));
}

asio::awaitable<std::vector<team_member>> team_members(pg::connection& c, std::int64_t team_id)
{
    auto rs = co_await sql(c,
                           "SELECT m.user_id, u.display_name, m.role, " DEPOT_MS(
                               "m.added_at") " FROM team_members m JOIN users u ON u.id = m.user_id "
                                             "WHERE m.team_id = $1 ORDER BY m.user_id",
                           team_id);
    std::vector<team_member> out;
    for (auto r : rs)
        out.push_back(team_member{.user_id = r.str(0),
                                  .display_name = r.str(1),
                                  .role = team_role_of(r.text(2)).value_or(team_role::reader),
                                  .added_at = from_millis(r.i64(3))});
    co_return out;
}

asio::awaitable<std::optional<std::string>> display_name_of_user(pg::connection& c, std::string_view user_id)
{
    auto user = co_await sql(c, "SELECT display_name FROM users WHERE id = $1", user_id);
    if (user.empty())
        co_return std::nullopt;
    co_return user[0].str(0);
}

asio::awaitable<member_row> upsert_member(pg::connection& c, std::int64_t team_id, std::string_view user_id,
                                          team_role role)
{
    auto rs = co_await sql(c,
                           "INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, $3) "
                           "ON CONFLICT (team_id, user_id) DO UPDATE SET role = excluded.role "
                           "RETURNING " DEPOT_MS("added_at") ", (SELECT name FROM teams WHERE id = $1)",
                           team_id, user_id, to_string(role));
    co_return member_row{.added_at = from_millis(rs[0].i64(0)), .team_name = rs[0].str(1)};
}

asio::awaitable<std::optional<std::string>> delete_member(pg::connection& c, std::int64_t team_id,
                                                          std::string_view user_id)
{
    auto rs = co_await sql(c,
                           "DELETE FROM team_members WHERE team_id = $1 AND user_id = $2 "
                           "RETURNING role, (SELECT name FROM teams WHERE id = $1)",
                           team_id, user_id);
    if (rs.empty())
        co_return std::nullopt;
    co_return rs[0].str(1);
}

asio::awaitable<std::vector<std::int64_t>> disable_subscriptions_of(pg::connection& c, std::int64_t team_id,
                                                                    std::string_view user_id,
                                                                    std::string_view reason)
{
    auto rs =
        co_await sql(c,
                     "UPDATE webhook_subscriptions SET enabled = false, disabled_reason = $3, updated_at = "
                     "now() WHERE team_id = $1 AND created_by = $2 AND enabled AND NOT EXISTS (SELECT 1 "
                     "FROM users WHERE id = $2 AND is_admin) RETURNING id",
                     team_id, user_id, reason);
    std::vector<std::int64_t> ids;
    for (auto r : rs)
        ids.push_back(r.i64(0));
    std::sort(ids.begin(), ids.end());
    co_return ids;
}

} // namespace depot::registry
