// What every model transaction records (registry/repo/model_detail.hpp).
#include "registry/repo/model_detail.hpp"

#include "registry/repo/audit.hpp"
#include "registry/repo/events.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/repo/warmup_repository.hpp"

#include <algorithm>

namespace depot::registry::model_detail {

const char* const model_select =
    "SELECT m.id, m.team_id, t.name, m.name, m.bucket_id, b.name, m.prefix, m.description, "
    "coalesce(m.required_approvals, t.required_approvals), coalesce(m.approver_role, t.approver_role), "
    "coalesce(m.protected_aliases, t.protected_aliases)::text, m.revision, m.created_by, " DEPOT_MS(
        "m.created_at") ", " DEPOT_MS("m.updated_at") ", m.next_version - 1, "
                                                      "coalesce(m.four_eyes, t.four_eyes) "
                                                      "FROM models m JOIN teams t ON t.id = m.team_id "
                                                      "JOIN buckets b ON b.id = m.bucket_id ";

model model_of(const pg::row& r)
{
    model out{.id = r.i64(0),
              .team_id = r.i64(1),
              .team = r.str(2),
              .name = r.str(3),
              .bucket_id = r.i64(4),
              .bucket = r.str(5),
              .prefix = r.str(6),
              .description = r.str(7),
              .policy = policy_of(r, 8),
              .revision = r.i64(11),
              .created_by = r.str(12),
              .created_at = from_millis(r.i64(13)),
              .updated_at = from_millis(r.i64(14)),
              .version_count = static_cast<int>(r.i64(15))};
    out.policy.four_eyes = four_eyes_rule_of(r.text(16)).value_or(four_eyes_rule::author_and_submitter);
    return out;
}

// The approvals of a version count from its last submission.
const char* const version_select =
    "SELECT v.id, v.model_id, v.number, v.label, v.state, v.description, v.framework, v.format, v.parent, "
    "v.run_url, v.labels::text, v.metrics::text, v.file_count, v.total_bytes, v.created_by, " DEPOT_MS(
        "v.created_at") ", "
                        "(SELECT coalesce(string_agg(a.name, ',' ORDER BY a.name), '') FROM model_aliases a "
                        " WHERE a.version_id = v.id), "
                        "(SELECT coalesce(string_agg(DISTINCT e.actor, ','), '') FROM model_events e "
                        " WHERE e.version_id = v.id AND e.action = 'approval' AND e.id > "
                        " coalesce((SELECT max(s.id) FROM model_events s WHERE s.version_id = v.id "
                        "           AND s.action = 'submitted'), 0)), "
                        "(SELECT s.actor FROM model_events s WHERE s.version_id = v.id AND s.action = "
                        " 'submitted' ORDER BY s.id DESC LIMIT 1), "
                        "array_to_string(v.contributors, ',') "
                        "FROM model_versions v ";

model_version version_of(const pg::row& r)
{
    model_version v{.id = r.i64(0),
                    .model_id = r.i64(1),
                    .number = static_cast<int>(r.i64(2)),
                    .label = r.opt_str(3),
                    .state = r.str(4),
                    .description = r.str(5),
                    .framework = r.str(6),
                    .format = r.str(7),
                    .parent = std::nullopt,
                    .run_url = r.str(9),
                    .labels_json = r.str(10),
                    .metrics_json = r.str(11),
                    .file_count = r.i64(12),
                    .total_bytes = r.i64(13),
                    .created_by = r.str(14),
                    .created_at = from_millis(r.i64(15))};
    if (!r.is_null(8))
        v.parent = static_cast<int>(r.i64(8));
    v.aliases = split_list(r.text(16), ',');
    v.approvals = split_list(r.text(17), ',');
    std::sort(v.approvals.begin(), v.approvals.end());
    v.submitted_by = r.str(18);
    v.contributors = split_list(r.text(19), ',');
    return v;
}

namespace {

/// ",\"version\":{...}" for version events.
std::string version_member(int number, const std::optional<std::string>& label, std::string_view state)
{
    return ",\"version\":{\"number\":" + std::to_string(number) +
           ",\"label\":" + (label ? events::quote(*label) : std::string("null")) +
           ",\"state\":" + events::quote(state) + "}";
}

} // namespace

std::string text_array(const std::vector<std::string>& v)
{
    std::string out = "{";
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i)
            out += ',';
        out += v[i];
    }
    return out + "}";
}

std::vector<std::string> split_list(std::string_view s, char sep)
{
    std::vector<std::string> out;
    while (!s.empty()) {
        auto at = s.find(sep);
        out.emplace_back(s.substr(0, at));
        if (at == std::string_view::npos)
            break;
        s.remove_prefix(at + 1);
    }
    return out;
}

std::vector<std::string> parse_text_array(std::string_view s)
{
    if (s.size() < 2)
        return {};
    return split_list(s.substr(1, s.size() - 2), ',');
}

approval_policy policy_of(const pg::row& r, int col)
{
    return approval_policy{.required_approvals = static_cast<int>(r.i64(col)),
                           .approver_role = team_role_of(r.text(col + 1)).value_or(team_role::maintainer),
                           .protected_aliases = parse_text_array(r.text(col + 2))};
}

std::string alias_details(std::string_view name, std::optional<std::string> from, std::optional<int> to)
{
    return "{\"alias\":\"" + std::string(name) + "\",\"from\":" + from.value_or("null") +
           ",\"to\":" + (to ? std::to_string(*to) : std::string("null")) + "}";
}

asio::awaitable<void> record(pg::connection& c, std::int64_t model_id, std::optional<std::int64_t> version_id,
                             std::string_view action, const audit_context& who, std::string_view comment,
                             std::optional<std::string> from_state, std::optional<std::string> to_state,
                             std::string details)
{
    co_await sql(
        c,
        "INSERT INTO model_events (model_id, version_id, action, actor, comment, from_state, to_state, "
        "details) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)",
        model_id, version_id, action, who.actor, comment, from_state, to_state, details);
    // The audit row on team/model[:version number]. The model's event lock comes first (it is the first
    // statement of most model transactions already): a transaction holding the audit chain's head must not
    // then wait for a model lock that a transaction queued on the head holds.
    co_await events::lock_model(c, model_id);
    std::string audit_action = "version." + std::string(action);
    if (action == "model_created")
        audit_action = "model.create";
    else if (action == "model_updated")
        audit_action = "model.update";
    else if (action == "created")
        audit_action = "version.create";
    else if (action == "approval")
        audit_action = "version.approve";
    else if (action == "alias_set")
        audit_action = "alias.set";
    else if (action == "alias_deleted")
        audit_action = "alias.delete";
    co_await sql(
        c,
        "SELECT audit_append($1, $2, t.name, $3, t.name || '/' || m.name || coalesce(':' || v.number, ''), "
        "'allowed', $4, $5, $6::jsonb || jsonb_strip_nulls(jsonb_build_object('comment', "
        "nullif($7, ''), 'from_state', $8::text, 'to_state', $9::text))) "
        "FROM models m JOIN teams t ON t.id = m.team_id "
        "LEFT JOIN model_versions v ON v.id = $10 WHERE m.id = $11",
        who.actor, who.credential, audit_action, who.request_id, who.client_addr, details, comment,
        from_state, to_state, version_id, model_id);
}

std::string event_data(const model& m, const audit_context& who, const std::string& extra)
{
    return "{\"team\":" + events::quote(m.team) + ",\"model\":" + events::quote(m.name) +
           ",\"actor\":" + events::quote(who.actor) + extra + "}";
}

asio::awaitable<void> emit_version_event(pg::connection& c, const model& m, std::string_view type,
                                         std::int64_t version_id, int number,
                                         const std::optional<std::string>& label, std::string_view state,
                                         const audit_context& who, std::string_view comment)
{
    const std::string data =
        event_data(m, who, version_member(number, label, state) + ",\"comment\":" + events::quote(comment));
    co_await events::emit_model_event(c, type, m.team_id, m.id, m.bucket_id, version_id, data);
    if (type == "version.approved")
        co_await warmup_on_event(c, type, m.team_id, m.id, version_id, std::nullopt, who.actor);
}

asio::awaitable<std::int64_t> move_alias(pg::connection& c, const model& m, std::string_view name,
                                         std::int64_t version_id, int number, const audit_context& who)
{
    const std::int64_t model_id = m.id;
    auto before =
        co_await sql(c,
                     "SELECT v.number FROM model_aliases a JOIN model_versions v ON v.id = a.version_id "
                     "WHERE a.model_id = $1 AND a.name = $2 FOR UPDATE OF a",
                     model_id, name);
    auto rs =
        co_await sql(c,
                     "INSERT INTO model_aliases (model_id, name, version_id, updated_by) VALUES ($1, $2, $3, "
                     "$4) ON CONFLICT (model_id, name) DO UPDATE SET version_id = excluded.version_id, "
                     "updated_by = excluded.updated_by, updated_at = now() RETURNING " DEPOT_MS("updated_at"),
                     model_id, name, version_id, who.actor);
    std::optional<std::string> from;
    if (!before.empty())
        from = before[0].str(0);
    co_await record(c, model_id, version_id, "alias_set", who, "", std::nullopt, std::nullopt,
                    alias_details(name, from, number));
    const std::string data =
        event_data(m, who,
                   ",\"alias\":" + events::quote(name) + ",\"from\":" + from.value_or("null") +
                       ",\"to\":" + std::to_string(number));
    co_await events::emit_model_event(c, "alias.updated", m.team_id, m.id, m.bucket_id, version_id, data);
    co_await warmup_on_event(c, "alias.updated", m.team_id, m.id, version_id, std::string(name), who.actor);
    co_return rs[0].i64(0);
}

} // namespace depot::registry::model_detail
