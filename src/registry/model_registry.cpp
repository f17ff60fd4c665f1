#include "registry/model_registry.hpp"

#include "common/hash.hpp"
#include "registry/audit.hpp"
#include "registry/content.hpp"
#include "registry/events.hpp"
#include "registry/lookup_cache.hpp"
#include "registry/sql_util.hpp"
#include "registry/transaction.hpp"
#include "registry/versions.hpp"
#include "registry/warmup_repository.hpp"
#include "s3/listing.hpp"
#include "s3/names.hpp"

#include <algorithm>

namespace depot::registry {
namespace {

/// A text[] literal; every element matches the alias-name pattern, so nothing needs quoting.
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

/// Parses PostgreSQL's text output of a text[] of simple names: {a,b}.
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

constexpr const char* team_columns = "t.id, t.name, " DEPOT_MS(
    "t.created_at") ", t.required_approvals, t.approver_role, t.protected_aliases::text";

team team_of(const pg::row& r)
{
    return team{.id = r.i64(0),
                .name = r.str(1),
                .created_at = from_millis(r.i64(2)),
                .default_policy = policy_of(r, 3)};
}

constexpr const char* model_select =
    "SELECT m.id, m.team_id, t.name, m.name, m.bucket_id, b.name, m.prefix, m.description, "
    "coalesce(m.required_approvals, t.required_approvals), coalesce(m.approver_role, t.approver_role), "
    "coalesce(m.protected_aliases, t.protected_aliases)::text, m.revision, m.created_by, " DEPOT_MS(
        "m.created_at") ", " DEPOT_MS("m.updated_at") ", m.next_version - 1 "
                                                      "FROM models m JOIN teams t ON t.id = m.team_id "
                                                      "JOIN buckets b ON b.id = m.bucket_id ";

model model_of(const pg::row& r)
{
    return model{.id = r.i64(0),
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
}

// The approvals of a version count from its last submission.
constexpr const char* version_select =
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
                        " 'submitted' ORDER BY s.id DESC LIMIT 1) "
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
    return v;
}

/// path, size, sha256, etag, content_type starting at column `col`.
model_file file_of(const pg::row& r, int col = 0)
{
    return model_file{.path = r.str(col),
                      .size = static_cast<std::uint64_t>(r.i64(col + 1)),
                      .sha256 = r.opt_bytea(col + 2).value_or(""),
                      .etag = r.str(col + 3),
                      .content_type = r.opt_str(col + 4)};
}

/// The segments of one file of a version ($1 version id, $2 path), in order, for segments_of.
constexpr const char* file_segments_sql =
    "SELECT s.blob_id, b.store_id, s.blob_offset, s.length FROM model_file_segments s "
    "JOIN blobs b ON b.id = s.blob_id WHERE s.version_id = $1 AND s.path = $2 ORDER BY s.ordinal";

/// The details of an alias event: {"alias": name, "from": number|null, "to": number|null}. Alias names are
/// [A-Za-z0-9._-] only, so nothing needs escaping.
std::string alias_details(std::string_view name, std::optional<std::string> from, std::optional<int> to)
{
    return "{\"alias\":\"" + std::string(name) + "\",\"from\":" + from.value_or("null") +
           ",\"to\":" + (to ? std::to_string(*to) : std::string("null")) + "}";
}

bool all_digits(std::string_view s)
{
    return !s.empty() && s.size() <= 9 &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

asio::awaitable<void> record(pg::connection& c, std::int64_t model_id, std::optional<std::int64_t> version_id,
                             std::string_view action, std::string_view actor, std::string_view comment,
                             std::optional<std::string> from_state, std::optional<std::string> to_state,
                             std::string details = "{}")
{
    co_await sql(
        c,
        "INSERT INTO model_events (model_id, version_id, action, actor, comment, from_state, to_state, "
        "details) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)",
        model_id, version_id, action, actor, comment, from_state, to_state, details);
    // The audit row on team/model[:version number]. The model's event lock comes first (it is the first
    // statement of most model transactions already): a transaction holding the audit chain's head must not
    // then wait for a model lock that a transaction queued on the head holds.
    co_await events::lock_model(c, model_id);
    auto who = co_await current_audit();
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

/// The `data` of a model event: team, model, actor, then `extra` members (",\"k\":v...").
std::string event_data(const model& m, std::string_view actor, const std::string& extra = {})
{
    return "{\"team\":" + events::quote(m.team) + ",\"model\":" + events::quote(m.name) +
           ",\"actor\":" + events::quote(actor) + extra + "}";
}

/// ",\"version\":{...}" for version events.
std::string version_member(int number, const std::optional<std::string>& label, std::string_view state)
{
    return ",\"version\":{\"number\":" + std::to_string(number) +
           ",\"label\":" + (label ? events::quote(*label) : std::string("null")) +
           ",\"state\":" + events::quote(state) + "}";
}

asio::awaitable<void> emit_version_event(pg::connection& c, const model& m, std::string_view type,
                                         std::int64_t version_id, int number,
                                         const std::optional<std::string>& label, std::string_view state,
                                         std::string_view actor, std::string_view comment)
{
    const std::string data =
        event_data(m, actor, version_member(number, label, state) + ",\"comment\":" + events::quote(comment));
    co_await events::emit_model_event(c, type, m.team_id, m.id, m.bucket_id, version_id, data);
    if (type == "version.approved")
        co_await warmup_on_event(c, type, m.team_id, m.id, version_id, std::nullopt, actor);
}

/// Inside a transaction: points alias `name` at version `version_id` (number `number`) and records the move
/// with the version it left (model_events, and an alias.updated event). Returns the alias's updated_at (epoch
/// ms).
asio::awaitable<std::int64_t> move_alias(pg::connection& c, const model& m, std::string_view name,
                                         std::int64_t version_id, int number, std::string_view actor)
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
                     model_id, name, version_id, actor);
    std::optional<std::string> from;
    if (!before.empty())
        from = before[0].str(0);
    co_await record(c, model_id, version_id, "alias_set", actor, "", std::nullopt, std::nullopt,
                    alias_details(name, from, number));
    const std::string data =
        event_data(m, actor,
                   ",\"alias\":" + events::quote(name) + ",\"from\":" + from.value_or("null") +
                       ",\"to\":" + std::to_string(number));
    co_await events::emit_model_event(c, "alias.updated", m.team_id, m.id, m.bucket_id, version_id, data);
    co_await warmup_on_event(c, "alias.updated", m.team_id, m.id, version_id, std::string(name), actor);
    co_return rs[0].i64(0);
}

/// Streams segments through SHA-256.
asio::awaitable<result<std::string>> hash_segments(storage::blob_store& store,
                                                   const std::vector<segment>& segments)
{
    hasher h(digest_kind::sha256);
    std::vector<std::byte> buf(1 << 20);
    for (const auto& s : segments) {
        auto reader = co_await store.open(s.store_id, s.offset, s.length);
        if (!reader)
            co_return std::move(reader).error();
        std::uint64_t left = s.length;
        while (left > 0) {
            const std::span<std::byte> window(buf.data(), std::min<std::uint64_t>(buf.size(), left));
            auto n = co_await (*reader)->read_some(window);
            if (!n)
                co_return std::move(n).error();
            if (*n == 0)
                co_return make_error(errc::io_error, "blob is shorter than the manifest says");
            h.update(std::span<const std::byte>(buf.data(), *n));
            left -= *n;
        }
    }
    co_return h.finish();
}

std::vector<segment> segments_of(const pg::result_set& rs)
{
    std::vector<segment> out;
    for (auto r : rs)
        out.push_back(segment{.blob_row = r.i64(0),
                              .store_id = r.str(1),
                              .offset = static_cast<std::uint64_t>(r.i64(2)),
                              .length = static_cast<std::uint64_t>(r.i64(3))});
    return out;
}

} // namespace

// --- teams -----------------------------------------------------------------------------------------------

asio::awaitable<result<team>> model_registry::create_team(std::string name, approval_policy defaults)
{
    co_return co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<team>> {
        auto rs = co_await sql(c,
                               std::string("INSERT INTO teams AS t (name, required_approvals, approver_role, "
                                           "protected_aliases) VALUES ($1, $2, $3, $4::text[]) "
                                           "ON CONFLICT (name) DO NOTHING RETURNING ") +
                                   team_columns,
                               name, defaults.required_approvals, to_string(defaults.approver_role),
                               text_array(defaults.protected_aliases));
        if (rs.empty())
            co_return make_error(errc::already_exists, "A team named '" + name + "' already exists");
        co_await append_audit(c, "team.create", name, name);
        co_return team_of(rs[0]);
    });
}

asio::awaitable<std::vector<team>> model_registry::teams_of(std::string_view user_id, bool is_admin)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn,
                           std::string("SELECT ") + team_columns +
                               " FROM teams t WHERE $2 OR EXISTS (SELECT 1 FROM team_members m "
                               "WHERE m.team_id = t.id AND m.user_id = $1) ORDER BY t.name",
                           user_id, is_admin);
    std::vector<team> out;
    for (auto r : rs)
        out.push_back(team_of(r));
    co_return out;
}

asio::awaitable<result<team>> model_registry::get_team(std::string_view name)
{
    auto conn = co_await pool_.acquire();
    auto rs =
        co_await sql(*conn, std::string("SELECT ") + team_columns + " FROM teams t WHERE t.name = $1", name);
    if (rs.empty())
        co_return make_error(errc::not_found, "No such team");
    co_return team_of(rs[0]);
}

asio::awaitable<std::optional<team_role>> model_registry::role_of(std::int64_t team_id,
                                                                  std::string_view user_id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn, "SELECT role FROM team_members WHERE team_id = $1 AND user_id = $2",
                           team_id, user_id);
    if (rs.empty())
        co_return std::nullopt;
    co_return team_role_of(rs[0].text(0));
}

asio::awaitable<std::vector<team_member>> model_registry::members(std::int64_t team_id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn,
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

asio::awaitable<result<team_member>> model_registry::set_member(std::int64_t team_id,
                                                                std::string_view user_id, team_role role)
{
    co_return co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<team_member>> {
        auto user = co_await sql(c, "SELECT display_name FROM users WHERE id = $1", user_id);
        if (user.empty())
            co_return make_error(errc::not_found, "No such user");
        auto rs = co_await sql(c,
                               "INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, $3) "
                               "ON CONFLICT (team_id, user_id) DO UPDATE SET role = excluded.role "
                               "RETURNING " DEPOT_MS("added_at") ", (SELECT name FROM teams WHERE id = $1)",
                               team_id, user_id, to_string(role));
        const std::string team_name = rs[0].str(1);
        co_await append_audit(c, "team.member.set", team_name + "/" + std::string(user_id), team_name,
                              "{\"role\":" + audit_quote(to_string(role)) + "}");
        co_return team_member{.user_id = std::string(user_id),
                              .display_name = user[0].str(0),
                              .role = role,
                              .added_at = from_millis(rs[0].i64(0))};
    });
}

asio::awaitable<result<void>> model_registry::remove_member(std::int64_t team_id, std::string_view user_id)
{
    co_return co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
        auto rs = co_await sql(c,
                               "DELETE FROM team_members WHERE team_id = $1 AND user_id = $2 "
                               "RETURNING role, (SELECT name FROM teams WHERE id = $1)",
                               team_id, user_id);
        if (rs.empty())
            co_return make_error(errc::not_found, "The user is not a member of this team");
        const std::string team_name = rs[0].str(1);
        co_await append_audit(c, "team.member.remove", team_name + "/" + std::string(user_id), team_name);
        co_return ok();
    });
}

// --- models ----------------------------------------------------------------------------------------------

asio::awaitable<result<model>> model_registry::create_model(const team& owner, model_spec spec,
                                                            std::string_view actor)
{
    auto work = [&](pg::connection& c) -> asio::awaitable<result<model>> {
        std::optional<std::string> role;
        if (spec.policy.approver_role)
            role = std::string(to_string(*spec.policy.approver_role));
        std::optional<std::string> aliases;
        if (spec.policy.protected_aliases)
            aliases = text_array(*spec.policy.protected_aliases);
        auto rs = co_await sql(c,
                               "INSERT INTO models (team_id, name, bucket_id, prefix, description, "
                               "required_approvals, approver_role, protected_aliases, created_by) "
                               "VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text[], $9) "
                               "ON CONFLICT (team_id, name) DO NOTHING RETURNING id",
                               owner.id, spec.name, spec.bucket_id, spec.prefix, spec.description,
                               spec.policy.required_approvals, role, aliases, actor);
        if (rs.empty())
            co_return make_error(errc::already_exists,
                                 "The team already has a model named '" + spec.name + "'");
        const auto id = rs[0].i64(0);
        co_await record(c, id, std::nullopt, "model_created", actor, "", std::nullopt, std::nullopt);
        auto rows = co_await sql(c, std::string(model_select) + "WHERE m.id = $1", id);
        auto created = model_of(rows[0]);
        const std::string data = event_data(created, actor,
                                            ",\"bucket\":" + events::quote(created.bucket) +
                                                ",\"prefix\":" + events::quote(created.prefix) +
                                                ",\"description\":" + events::quote(created.description));
        co_await events::emit_model_event(c, "model.created", created.team_id, created.id, created.bucket_id,
                                          std::nullopt, data);
        co_return created;
    };
    auto created = co_await transact(pool_, work);
    // The bucket now has a model: its GETs record model downloads from this process's next request on.
    if (created && cache_)
        cache_->forget_bucket_id(created->bucket_id);
    co_return created;
}

asio::awaitable<std::vector<model>> model_registry::models(std::int64_t team_id, std::string_view after,
                                                           std::size_t limit)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(
        *conn, std::string(model_select) + "WHERE m.team_id = $1 AND m.name > $2 ORDER BY m.name LIMIT $3",
        team_id, after, static_cast<std::int64_t>(limit));
    std::vector<model> out;
    for (auto r : rs)
        out.push_back(model_of(r));
    co_return out;
}

asio::awaitable<result<model>> model_registry::get_model(std::int64_t team_id, std::string_view name)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn, std::string(model_select) + "WHERE m.team_id = $1 AND m.name = $2", team_id,
                           name);
    if (rs.empty())
        co_return make_error(errc::not_found, "No such model");
    co_return model_of(rs[0]);
}

asio::awaitable<result<model>> model_registry::update_model(const model& m, model_update update,
                                                            std::optional<std::int64_t> expected_revision,
                                                            std::string_view actor)
{
    auto work = [&](pg::connection& c) -> asio::awaitable<result<model>> {
        auto cur = co_await sql(c, "SELECT revision FROM models WHERE id = $1 FOR UPDATE", m.id);
        if (cur.empty())
            co_return make_error(errc::not_found, "No such model");
        if (expected_revision && cur[0].i64(0) != *expected_revision)
            co_return make_error(errc::precondition_failed,
                                 "The model changed since it was read (If-Match does not match its ETag)");
        std::optional<std::string> role;
        if (update.policy.approver_role)
            role = std::string(to_string(*update.policy.approver_role));
        std::optional<std::string> aliases;
        if (update.policy.protected_aliases)
            aliases = text_array(*update.policy.protected_aliases);
        co_await sql(c,
                     "UPDATE models SET description = coalesce($2, description), "
                     "required_approvals = coalesce($3, required_approvals), "
                     "approver_role = coalesce($4, approver_role), "
                     "protected_aliases = coalesce($5::text[], protected_aliases), "
                     "revision = revision + 1, updated_at = now() WHERE id = $1",
                     m.id, update.description, update.policy.required_approvals, role, aliases);
        co_await record(c, m.id, std::nullopt, "model_updated", actor, "", std::nullopt, std::nullopt);
        auto rs = co_await sql(c, std::string(model_select) + "WHERE m.id = $1", m.id);
        co_return model_of(rs[0]);
    };
    co_return co_await transact(pool_, work);
}

// --- versions --------------------------------------------------------------------------------------------

asio::awaitable<result<void>> model_registry::hash_unknown_digests(const model& m)
{
    const std::string upper = m.prefix.empty() ? std::string() : s3::prefix_successor(m.prefix);
    auto conn = co_await pool_.acquire();
    auto rows = co_await sql(*conn,
                             "SELECT id FROM object_versions WHERE bucket_id = $1 AND key >= $2 AND "
                             "($3 = '' OR key < $3) AND superseded_seq IS NULL AND NOT is_delete_marker "
                             "AND sha256 IS NULL ORDER BY key",
                             m.bucket_id, m.prefix, upper);
    for (auto row : rows) {
        const auto id = row.i64(0);
        auto segs =
            co_await sql(*conn,
                         "SELECT s.blob_id, b.store_id, s.blob_offset, s.length FROM object_segments s "
                         "JOIN blobs b ON b.id = s.blob_id WHERE s.version_row = $1 ORDER BY s.ordinal",
                         id);
        auto digest = co_await hash_segments(store_, segments_of(segs));
        if (!digest) {
            // Deleted meanwhile: the version will not contain it (or hash_version_files catches up).
            if (digest.error().code == errc::not_found)
                continue;
            co_return std::move(digest).error();
        }
        const pg::bytes raw(*digest);
        co_await sql(*conn, "UPDATE object_versions SET sha256 = $2 WHERE id = $1 AND sha256 IS NULL", id,
                     raw);
    }
    co_return ok();
}

asio::awaitable<result<void>> model_registry::hash_version_files(std::int64_t version_id)
{
    auto conn = co_await pool_.acquire();
    auto rows = co_await sql(*conn, "SELECT path FROM model_files WHERE version_id = $1 AND sha256 IS NULL",
                             version_id);
    for (auto row : rows) {
        const auto path = row.str(0);
        auto segs = co_await sql(*conn, file_segments_sql, version_id, path);
        auto digest = co_await hash_segments(store_, segments_of(segs));
        if (!digest)
            co_return std::move(digest).error();
        const pg::bytes raw(*digest);
        co_await sql(*conn, "UPDATE model_files SET sha256 = $3 WHERE version_id = $1 AND path = $2",
                     version_id, path, raw);
    }
    co_return ok();
}

asio::awaitable<result<model_version>> model_registry::create_version(const model& m, version_spec spec,
                                                                      std::string_view actor)
{
    if (auto hashed = co_await hash_unknown_digests(m); !hashed)
        co_return std::move(hashed).error();
    const std::string upper = m.prefix.empty() ? std::string() : s3::prefix_successor(m.prefix);
    auto work = [&](pg::connection& c) -> asio::awaitable<result<std::int64_t>> {
        co_await events::lock_model(c, m.id);
        auto locked = co_await sql(c, "SELECT next_version FROM models WHERE id = $1 FOR UPDATE", m.id);
        if (locked.empty())
            co_return make_error(errc::not_found, "No such model");
        const auto number = locked[0].i64(0);
        if (spec.label) {
            auto taken =
                co_await sql(c,
                             "SELECT 1 FROM model_versions WHERE model_id = $1 AND label = $2 UNION ALL "
                             "SELECT 1 FROM model_aliases WHERE model_id = $1 AND name = $2",
                             m.id, *spec.label);
            if (!taken.empty())
                co_return make_error(errc::conflict,
                                     "The label '" + *spec.label +
                                         "' already names a version or an alias of this model");
        }
        if (spec.parent && (*spec.parent < 1 || *spec.parent >= number))
            co_return make_error(errc::invalid_argument, "The parent version does not exist", "parent");
        // Writers hold the bucket's write lock shared while they publish: taking it exclusively waits for
        // those in flight and queues new ones until the commit, so the files are the prefix at one moment
        // (and, unlike a row lock, a steady stream of writers cannot starve the version).
        if (!co_await lock_bucket_writes(c, m.bucket_id))
            co_return make_error(errc::no_such_bucket, "The model's bucket no longer exists");
        auto inserted =
            co_await sql(c,
                         "INSERT INTO model_versions (model_id, number, label, description, framework, "
                         "format, parent, run_url, labels, metrics, created_by) VALUES ($1, $2, $3, "
                         "$4, $5, $6, $7, $8, $9::jsonb, $10::jsonb, $11) RETURNING id",
                         m.id, number, spec.label, spec.description, spec.framework, spec.format, spec.parent,
                         spec.run_url, spec.labels_json, spec.metrics_json, actor);
        const auto vid = inserted[0].i64(0);
        if (spec.before_freeze) {
            auto published = co_await spec.before_freeze(c);
            if (!published)
                co_return std::move(published).error();
        }
        // The object rows visible now (or at the snapshot's sequence number $5). Directory markers (the
        // prefix itself, empty keys ending in '/') are not files.
        const std::string visible =
            std::string(
                "FROM object_versions o WHERE o.bucket_id = $2 AND o.key > $3 AND ($4 = '' OR o.key < "
                "$4) AND NOT o.is_delete_marker AND NOT (o.size = 0 AND o.key LIKE '%/') AND ") +
            (spec.as_of_seq ? "o.created_seq <= $5 AND (o.superseded_seq IS NULL OR o.superseded_seq > $5) "
                            : "o.superseded_seq IS NULL ");
        const std::string files_sql = "INSERT INTO model_files (version_id, path, size, sha256, etag, "
                                      "content_type) SELECT $1, substr(o.key, char_length($3) + 1), o.size, "
                                      "o.sha256, o.etag, o.content_type " +
                                      visible;
        const std::string segments_sql =
            "INSERT INTO model_file_segments (version_id, path, ordinal, blob_id, blob_offset, length) "
            "SELECT "
            "$1, substr(o.key, char_length($3) + 1), s.ordinal, s.blob_id, s.blob_offset, s.length FROM "
            "object_segments s JOIN (SELECT o.id, o.key " +
            visible + ") o ON o.id = s.version_row";
        if (spec.as_of_seq) {
            co_await sql(c, files_sql, vid, m.bucket_id, m.prefix, upper, *spec.as_of_seq);
            co_await sql(c, segments_sql, vid, m.bucket_id, m.prefix, upper, *spec.as_of_seq);
        } else {
            co_await sql(c, files_sql, vid, m.bucket_id, m.prefix, upper);
            co_await sql(c, segments_sql, vid, m.bucket_id, m.prefix, upper);
        }
        co_await sql(
            c,
            "UPDATE blobs b SET refcount = b.refcount + n.k FROM (SELECT blob_id, count(*) AS k FROM "
            "model_file_segments WHERE version_id = $1 GROUP BY blob_id) n WHERE b.id = n.blob_id",
            vid);
        co_await sql(
            c,
            "UPDATE model_versions SET (file_count, total_bytes) = (SELECT count(*), coalesce(sum(size), "
            "0) FROM model_files WHERE version_id = $1) WHERE id = $1",
            vid);
        co_await sql(c, "UPDATE models SET next_version = next_version + 1 WHERE id = $1", m.id);
        co_await record(c, m.id, vid, "created", actor, spec.description, std::nullopt, "draft");
        co_await emit_version_event(c, m, "version.created", vid, static_cast<int>(number), spec.label,
                                    "draft", actor, spec.description);
        if (!m.policy.protects("latest"))
            co_await move_alias(c, m, "latest", vid, static_cast<int>(number), actor);
        co_return vid;
    };
    auto created = co_await transact(pool_, work);
    if (!created)
        co_return std::move(created).error();
    if (auto hashed = co_await hash_version_files(*created); !hashed)
        co_return std::move(hashed).error();
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn, std::string(version_select) + "WHERE v.id = $1", *created);
    co_return version_of(rs[0]);
}

asio::awaitable<std::vector<model_version>> model_registry::versions(std::int64_t model_id, int before,
                                                                     std::size_t limit)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(
        *conn,
        std::string(version_select) +
            "WHERE v.model_id = $1 AND ($2 = 0 OR v.number < $2) ORDER BY v.number DESC LIMIT $3",
        model_id, before, static_cast<std::int64_t>(limit));
    std::vector<model_version> out;
    for (auto r : rs)
        out.push_back(version_of(r));
    co_return out;
}

asio::awaitable<result<model_version>> model_registry::get_version(const model& m, std::string_view ref,
                                                                   bool aliases)
{
    auto conn = co_await pool_.acquire();
    pg::result_set rs;
    if (all_digits(ref)) {
        rs = co_await sql(*conn, std::string(version_select) + "WHERE v.model_id = $1 AND v.number = $2",
                          m.id, static_cast<std::int64_t>(std::stoll(std::string(ref))));
    } else {
        rs = co_await sql(*conn, std::string(version_select) + "WHERE v.model_id = $1 AND v.label = $2", m.id,
                          ref);
        if (rs.empty() && aliases)
            rs = co_await sql(*conn,
                              std::string(version_select) +
                                  "JOIN model_aliases al ON al.version_id = v.id WHERE al.model_id = $1 AND "
                                  "al.name = $2 AND v.state <> 'archived'",
                              m.id, ref);
    }
    if (rs.empty())
        co_return make_error(errc::not_found, "No such version");
    co_return version_of(rs[0]);
}

asio::awaitable<std::vector<model_file>>
model_registry::files(std::int64_t version_id, std::string_view after, std::size_t limit, bool inclusive)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn,
                           std::string("SELECT path, size, sha256, etag, content_type FROM model_files WHERE "
                                       "version_id = $1 AND ") +
                               (inclusive ? "path >= $2" : "path > $2") + " ORDER BY path LIMIT $3",
                           version_id, after, static_cast<std::int64_t>(limit));
    std::vector<model_file> out;
    for (auto r : rs)
        out.push_back(file_of(r));
    co_return out;
}

asio::awaitable<file_diff> model_registry::diff(std::int64_t from_version, std::int64_t to_version)
{
    auto conn = co_await pool_.acquire();
    auto rs =
        co_await sql(*conn,
                     "SELECT a.path, a.size, a.sha256, a.etag, a.content_type, b.path, b.size, b.sha256, "
                     "b.etag, b.content_type FROM (SELECT * FROM model_files WHERE version_id = $1) a "
                     "FULL JOIN (SELECT * FROM model_files WHERE version_id = $2) b ON a.path = b.path "
                     "WHERE a.path IS NULL OR b.path IS NULL OR a.sha256 IS DISTINCT FROM b.sha256 OR "
                     "a.size <> b.size ORDER BY coalesce(a.path, b.path)",
                     from_version, to_version);
    file_diff out;
    for (auto r : rs) {
        if (r.is_null(0))
            out.added.push_back(file_of(r, 5));
        else if (r.is_null(5))
            out.removed.push_back(file_of(r, 0));
        else
            out.changed.emplace_back(file_of(r, 0), file_of(r, 5));
    }
    co_return out;
}

asio::awaitable<result<model_version>> model_registry::approve(const model& m, const model_version& v,
                                                               std::string_view actor, std::string comment)
{
    auto work = [&](pg::connection& c) -> asio::awaitable<result<void>> {
        co_await events::lock_model(c, m.id);
        auto state = co_await sql(c, "SELECT state FROM model_versions WHERE id = $1 FOR UPDATE", v.id);
        if (state.empty() || state[0].text(0) != "pending")
            co_return make_error(errc::conflict,
                                 "Only a pending (submitted) version can be approved; this one is " +
                                     (state.empty() ? std::string("gone") : state[0].str(0)));
        auto since =
            co_await sql(c,
                         "SELECT coalesce(max(id), 0), (SELECT actor FROM model_events WHERE version_id = "
                         "$1 AND action = 'submitted' ORDER BY id DESC LIMIT 1) FROM model_events "
                         "WHERE version_id = $1 AND action = 'submitted'",
                         v.id);
        const auto submitted_at = since[0].i64(0);
        if (since[0].text(1) == actor)
            co_return make_error(errc::access_denied, "The submitter of a version cannot approve it");
        auto mine =
            co_await sql(c,
                         "SELECT 1 FROM model_events WHERE version_id = $1 AND action = 'approval' AND "
                         "id > $2 AND actor = $3",
                         v.id, submitted_at, actor);
        if (!mine.empty())
            co_return make_error(errc::conflict, "You already approved this version");
        auto count =
            co_await sql(c,
                         "SELECT count(DISTINCT actor) FROM model_events WHERE version_id = $1 AND action = "
                         "'approval' AND id > $2",
                         v.id, submitted_at);
        const bool complete = count[0].i64(0) + 1 >= m.policy.required_approvals;
        std::optional<std::string> to;
        if (complete) {
            co_await sql(c, "UPDATE model_versions SET state = 'approved' WHERE id = $1", v.id);
            to = "approved";
        }
        co_await record(c, m.id, v.id, "approval", actor, comment, std::string("pending"), to);
        if (complete)
            co_await emit_version_event(c, m, "version.approved", v.id, v.number, v.label, "approved", actor,
                                        comment);
        co_return ok();
    };
    auto done = co_await transact(pool_, work);
    if (!done)
        co_return std::move(done).error();
    co_return co_await get_version(m, std::to_string(v.number), false);
}

asio::awaitable<result<model_version>>
model_registry::transition_version(const model& m, const model_version& v, transition t,
                                   std::string_view actor, std::string comment)
{
    auto work = [&](pg::connection& c) -> asio::awaitable<result<void>> {
        co_await events::lock_model(c, m.id);
        auto state = co_await sql(c, "SELECT state FROM model_versions WHERE id = $1 FOR UPDATE", v.id);
        if (state.empty())
            co_return make_error(errc::not_found, "No such version");
        const std::string from = state[0].str(0);
        std::string to, action;
        bool allowed = false;
        switch (t) {
        case transition::submit:
            allowed = from == "draft" || from == "rejected";
            to = "pending";
            action = "submitted";
            break;
        case transition::reject:
            allowed = from == "pending";
            to = "rejected";
            action = "rejected";
            break;
        case transition::deprecate:
            allowed = from != "archived" && from != "deprecated";
            to = "deprecated";
            action = "deprecated";
            break;
        case transition::archive:
            allowed = from != "archived";
            to = "archived";
            action = "archived";
            break;
        }
        if (!allowed)
            co_return make_error(errc::conflict, "A " + from + " version cannot become " + to);
        co_await sql(c, "UPDATE model_versions SET state = $2 WHERE id = $1", v.id, to);
        co_await record(c, m.id, v.id, action, actor, comment, from, to);
        const std::string type = "version." + action;
        co_await emit_version_event(c, m, type, v.id, v.number, v.label, to, actor, comment);
        co_return ok();
    };
    auto done = co_await transact(pool_, work);
    if (!done)
        co_return std::move(done).error();
    co_return co_await get_version(m, std::to_string(v.number), false);
}

asio::awaitable<std::vector<model_event>> model_registry::history(std::int64_t model_id,
                                                                  std::optional<std::int64_t> version_id,
                                                                  std::int64_t after, std::size_t limit)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(
        *conn,
        "SELECT e.id, v.number, e.action, e.actor, e.comment, e.from_state, e.to_state, "
        "e.details::text, " DEPOT_MS("e.at") " FROM model_events e LEFT JOIN model_versions v ON "
                                             "v.id = e.version_id WHERE e.model_id = $1 AND "
                                             "($2::bigint IS NULL OR e.version_id = $2) AND e.id > $3 "
                                             "ORDER BY e.id LIMIT $4",
        model_id, version_id, after, static_cast<std::int64_t>(limit));
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
                                                               const model_version& v, std::string_view actor,
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
        const auto updated_at = co_await move_alias(c, m, name, v.id, v.number, actor);
        co_return model_alias{.name = std::string(name),
                              .version = v.number,
                              .updated_by = std::string(actor),
                              .updated_at = from_millis(updated_at)};
    };
    co_return co_await transact(pool_, work);
}

asio::awaitable<result<void>> model_registry::delete_alias(const model& m, std::string_view name,
                                                           std::string_view actor,
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
        co_await record(c, m.id, rs[0].i64(0), "alias_deleted", actor, "", std::nullopt, std::nullopt,
                        alias_details(name, rs[0].str(1), std::nullopt));
        const std::string data = event_data(
            m, actor, ",\"alias\":" + events::quote(name) + ",\"from\":" + rs[0].str(1) + ",\"to\":null");
        co_await events::emit_model_event(c, "alias.updated", m.team_id, m.id, m.bucket_id, std::nullopt,
                                          data);
        co_return ok();
    };
    co_return co_await transact(pool_, work);
}

asio::awaitable<result<object_handle>> model_registry::open_file(const model_version& v,
                                                                 std::string_view path)
{
    auto conn = co_await pool_.acquire();
    auto rs =
        co_await sql(*conn,
                     "SELECT path, size, sha256, etag, content_type FROM model_files WHERE version_id = $1 "
                     "AND path = $2",
                     v.id, path);
    if (rs.empty())
        co_return make_error(errc::no_such_key, "The specified key does not exist.");
    auto f = file_of(rs[0]);
    auto segs = co_await sql(*conn, file_segments_sql, v.id, path);
    object_handle h;
    h.segments = segments_of(segs);
    h.version.key = f.path;
    h.version.version_id = "null";
    h.version.size = f.size;
    h.version.etag = f.etag;
    h.version.sha256 = f.sha256;
    h.version.owner_id = v.created_by;
    h.version.owner_display_name = v.created_by;
    h.version.last_modified = v.created_at;
    h.version.headers.content_type = f.content_type;
    co_return h;
}

} // namespace depot::registry
