// The SQL of the approval workflow and a model's history (registry/repo/model_approvals.hpp).
#include "registry/repo/model_approvals.hpp"

#include "registry/repo/sql_util.hpp"

namespace depot::registry {

asio::awaitable<std::optional<std::string>> lock_version_state(pg::connection& c, std::int64_t version_id)
{
    auto state = co_await sql(c, "SELECT state FROM model_versions WHERE id = $1 FOR UPDATE", version_id);
    if (state.empty())
        co_return std::nullopt;
    co_return state[0].str(0);
}

asio::awaitable<submission> last_submission(pg::connection& c, std::int64_t version_id)
{
    auto since =
        co_await sql(c,
                     "SELECT coalesce(max(id), 0), (SELECT actor FROM model_events WHERE version_id = "
                     "$1 AND action = 'submitted' ORDER BY id DESC LIMIT 1) FROM model_events "
                     "WHERE version_id = $1 AND action = 'submitted'",
                     version_id);
    co_return submission{.event_id = since[0].i64(0), .actor = since[0].str(1)};
}

asio::awaitable<bool> ever_submitted(pg::connection& c, std::int64_t version_id, std::string_view actor)
{
    auto rs = co_await sql(c,
                           "SELECT 1 FROM model_events WHERE version_id = $1 AND action = 'submitted' AND "
                           "actor = $2 LIMIT 1",
                           version_id, actor);
    co_return !rs.empty();
}

asio::awaitable<bool> approved_since(pg::connection& c, std::int64_t version_id, std::int64_t since,
                                     std::string_view actor)
{
    auto mine = co_await sql(c,
                             "SELECT 1 FROM model_events WHERE version_id = $1 AND action = 'approval' AND "
                             "id > $2 AND actor = $3",
                             version_id, since, actor);
    co_return !mine.empty();
}

asio::awaitable<std::int64_t> approvers_since(pg::connection& c, std::int64_t version_id, std::int64_t since,
                                              std::int64_t team_id, team_role approver_role)
{
    auto count = co_await sql(
        c,
        "SELECT count(DISTINCT e.actor) FROM model_events e WHERE e.version_id = $1 AND e.action = "
        "'approval' "
        "AND e.id > $2 AND (EXISTS (SELECT 1 FROM users u WHERE u.id = e.actor AND u.is_admin) OR EXISTS "
        "(SELECT 1 FROM team_members m WHERE m.team_id = $3 AND m.user_id = e.actor AND "
        "array_position(ARRAY['reader', 'writer', 'maintainer', 'admin'], m.role) >= "
        "array_position(ARRAY['reader', 'writer', 'maintainer', 'admin'], $4::text)))",
        version_id, since, team_id, to_string(approver_role));
    co_return count[0].i64(0);
}

asio::awaitable<void> mark_version_approved(pg::connection& c, std::int64_t version_id)
{
    co_await sql(c, "UPDATE model_versions SET state = 'approved' WHERE id = $1", version_id);
}

asio::awaitable<void> set_version_state(pg::connection& c, std::int64_t version_id, std::string_view state)
{
    co_await sql(c, "UPDATE model_versions SET state = $2 WHERE id = $1", version_id, state);
}

asio::awaitable<std::vector<model_event>> model_events_after(pg::connection& c, std::int64_t model_id,
                                                             std::optional<std::int64_t> version_id,
                                                             std::int64_t after, std::int64_t limit)
{
    auto rs = co_await sql(
        c,
        "SELECT e.id, v.number, e.action, e.actor, e.comment, e.from_state, e.to_state, "
        "e.details::text, " DEPOT_MS("e.at") " FROM model_events e LEFT JOIN model_versions v ON "
                                             "v.id = e.version_id WHERE e.model_id = $1 AND "
                                             "($2::bigint IS NULL OR e.version_id = $2) AND e.id > $3 "
                                             "ORDER BY e.id LIMIT $4",
        model_id, version_id, after, limit);
    std::vector<model_event> out;
    for (auto r : rs) {
        model_event e{.id = r.i64(0),
                      .version = std::nullopt,
                      .action = r.str(2),
                      .actor = r.str(3),
                      .comment = r.str(4),
                      .from_state = r.opt_str(5),
                      .to_state = r.opt_str(6),
                      .details_json = r.str(7),
                      .at = from_millis(r.i64(8))};
        if (!r.is_null(1))
            e.version = static_cast<int>(r.i64(1));
        out.push_back(std::move(e));
    }
    co_return out;
}

} // namespace depot::registry
