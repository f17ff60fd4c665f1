#include "registry/repo/audit.hpp"

#include "common/hash.hpp"
#include "common/json.hpp"
#include "registry/repo/sql_util.hpp"

#include <array>
#include <atomic>
#include <utility>
#include <vector>

namespace depot::registry {
namespace {

std::atomic<bool>& appended_here()
{
    static std::atomic<bool> flag{false};
    return flag;
}

} // namespace

asio::awaitable<std::int64_t> append_audit(pg::connection& c, const audit_context& ctx,
                                           std::string_view action, std::string_view resource,
                                           std::string_view team, std::string details_json,
                                           std::string_view outcome)
{
    const std::string a(action), r(resource), t(team), o(outcome);
    appended_here().store(true, std::memory_order_release);
    auto rs = co_await sql(c, "SELECT audit_append($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb)", ctx.actor,
                           ctx.credential, t, a, r, o, ctx.request_id, ctx.client_addr, details_json);
    co_return rs[0].i64(0);
}

asio::awaitable<void> append_object_audit(pg::connection& c, const audit_context& ctx,
                                          std::string_view action, std::int64_t bucket_id,
                                          std::string_view key, std::string details_json)
{
    const std::string a(action), k(key);
    appended_here().store(true, std::memory_order_release);
    defer_sql(c,
              "SELECT audit_append($1, $2, '', $3, (SELECT name FROM buckets WHERE id = $4) || '/' "
              "|| $5, 'allowed', $6, $7, $8::jsonb)",
              ctx.actor, ctx.credential, a, bucket_id, k, ctx.request_id, ctx.client_addr, details_json);
    co_return;
}

asio::awaitable<result<std::vector<std::string>>> list_audit(pg::pool& pool, const audit_query& q)
{
    auto conn = co_await pool.acquire();
    std::optional<std::string> since, until;
    if (!q.since.empty())
        since = q.since;
    if (!q.until.empty())
        until = q.until;
    const std::array<std::pair<const char*, const std::optional<std::string>*>, 2> times = {
        std::pair<const char*, const std::optional<std::string>*>("since", &since),
        std::pair<const char*, const std::optional<std::string>*>("until", &until)};
    for (const auto& [name, value] : times) {
        if (!*value)
            continue;
        bool valid = true;
        try {
            co_await sql(*conn, "SELECT $1::timestamptz", **value);
        } catch (const pg::error&) {
            valid = false;
        }
        if (!valid)
            co_return make_error(errc::invalid_argument,
                                 std::string("The parameter '") + name + "' must be an ISO 8601 timestamp",
                                 name);
    }
    const bool action_prefix = !q.action.empty() && q.action.back() == '.';
    auto rs = co_await sql(
        *conn,
        "SELECT jsonb_build_object('id', a.id, 'at', to_char(a.at AT TIME ZONE 'UTC', "
        "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), 'actor', a.actor, 'credential', a.credential, 'team', a.team, "
        "'action', a.action, 'resource', a.resource, 'outcome', a.outcome, 'request_id', a.request_id, "
        "'client_addr', a.client_addr, 'details', a.details, 'prev_hash', encode(a.prev_hash, 'hex'), "
        "'hash', encode(a.hash, 'hex'))::text FROM audit_log a WHERE a.id > $1 "
        "AND ($2::timestamptz IS NULL OR a.at >= $2::timestamptz) "
        "AND ($3::timestamptz IS NULL OR a.at < $3::timestamptz) "
        "AND ($4 = '' OR a.actor = $4) AND ($5 = '' OR a.team = $5) "
        "AND ($6 = '' OR (CASE WHEN $7 THEN starts_with(a.action, $6) ELSE a.action = $6 END)) "
        "AND ($8 = '' OR starts_with(a.resource, $8)) "
        "AND ($9 OR a.team IN (SELECT t.name FROM team_members m JOIN teams t ON t.id = m.team_id "
        "WHERE m.user_id = $10 AND m.role = 'admin')) "
        "ORDER BY a.id LIMIT $11",
        q.after_id, since, until, q.actor, q.team, q.action, action_prefix, q.resource, q.viewer_is_admin,
        q.viewer, static_cast<std::int64_t>(q.limit));
    std::vector<std::string> out;
    for (auto r : rs)
        out.push_back(r.str(0));
    co_return out;
}

asio::awaitable<audit_verification> verify_audit(pg::pool& pool)
{
    audit_verification out;
    auto conn = co_await pool.acquire();
    // One snapshot for the head and every page: rows committed meanwhile are not half seen.
    co_await conn->execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    auto head = co_await sql(*conn, "SELECT last_id, last_hash, anchor_id, anchor_hash FROM audit_head");
    const std::int64_t last_id = head[0].i64(0);
    const std::string last_hash = head[0].bytea(1);
    out.anchor_id = head[0].i64(2);
    std::string previous = head[0].bytea(3);
    std::int64_t position = 0;
    std::int64_t last_sealed = 0;
    for (;;) {
        auto rs = co_await sql(*conn,
                               "SELECT id, prev_hash IS NOT NULL, prev_hash, hash, audit_canonical(a) "
                               "FROM audit_log a WHERE id > $1 ORDER BY id LIMIT 1000",
                               position);
        for (auto r : rs) {
            const std::int64_t id = r.i64(0);
            position = id;
            if (!r.boolean(1)) {
                // Not linked yet: legitimate only after the sealed part of the chain.
                ++out.unsealed;
                if (!out.bad_row && id <= last_id) {
                    out.bad_row = id;
                    out.problem =
                        "the row has no hash but lies inside the sealed chain (its hash was removed)";
                }
                continue;
            }
            const std::string prev = r.bytea(2);
            const std::string stored = r.bytea(3);
            ++out.rows;
            if (out.bad_row)
                continue;
            if (id <= out.anchor_id) {
                out.bad_row = id;
                out.problem =
                    "the row is at or before the archive anchor (row " + std::to_string(out.anchor_id) + ")";
            } else if (out.unsealed > 0 || id > last_id) {
                out.bad_row = id;
                out.problem = "the row is sealed but lies after the chain head (row " +
                              std::to_string(last_id) + ") or after an unsealed row";
            } else if (prev != previous) {
                out.bad_row = id;
                out.problem = "prev_hash does not match the hash of the row before it (a row was removed, "
                              "inserted or rewritten)";
            } else if (sha256(prev + r.str(4)) != stored) {
                out.bad_row = id;
                out.problem = "the row's content does not match its hash (the row was edited)";
            }
            previous = stored;
            last_sealed = id;
        }
        if (rs.size() < 1000)
            break;
    }
    co_await conn->execute("COMMIT");
    if (!out.bad_row && (previous != last_hash || (out.rows > 0 && last_sealed != last_id))) {
        out.bad_row = last_id;
        out.problem = "the chain head does not match the last row (rows at the end were removed)";
    }
    co_return out;
}

asio::awaitable<std::int64_t> seal_audit(pg::pool& pool)
{
    auto conn = co_await pool.acquire();
    // The horizon is a statement of its own (autocommit): its exclusive lock waits for the appenders in
    // flight and holds new ones back only until it commits. When an appender takes longer than 200 ms to
    // commit, this round gives up instead of stalling every writer behind it.
    std::int64_t horizon = 0;
    bool settled = true;
    try {
        auto h = co_await sql(*conn, "SELECT audit_horizon(200)");
        horizon = h[0].i64(0);
    } catch (const pg::error&) {
        settled = false;
    }
    if (!settled) {
        appended_here().store(true, std::memory_order_release); // try again next round
        co_return 0;
    }
    auto rs = co_await sql(*conn, "SELECT audit_seal($1)", horizon);
    co_return rs[0].i64(0);
}

bool take_audit_appended() noexcept
{
    return appended_here().exchange(false, std::memory_order_acq_rel);
}

asio::awaitable<result<std::optional<std::int64_t>>> last_audit_row_before(pg::pool& pool,
                                                                           std::string_view before)
{
    auto conn = co_await pool.acquire();
    pg::result_set rs;
    bool valid = true;
    try {
        // Only the sealed part of the chain can be archived (an anchor needs a hash).
        rs = co_await sql(*conn,
                          "SELECT max(id) FROM audit_log WHERE at < $1::timestamptz "
                          "AND id <= (SELECT last_id FROM audit_head)",
                          before);
    } catch (const pg::error&) {
        valid = false;
    }
    if (!valid)
        co_return make_error(errc::invalid_argument, "--before must be an ISO 8601 timestamp", "before");
    if (rs[0].is_null(0))
        co_return std::optional<std::int64_t>();
    co_return std::optional<std::int64_t>(rs[0].i64(0));
}

} // namespace depot::registry
