#include "registry/repo/webhook_repository.hpp"

#include "common/hash.hpp"
#include "common/json.hpp"
#include "common/secret_box.hpp"
#include "registry/repo/audit.hpp"
#include "registry/repo/events.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/transaction.hpp"

#include <array>
#include <cmath>
#include <random>

namespace depot::registry {
namespace {

/// Associated data of sealed secrets before schema 0014: the same for every row.
constexpr std::string_view legacy_secret_ad = "depot-webhook-secret";

/// Associated data of a subscription's sealed secrets: its id, so that a sealed secret copied onto another
/// subscription's row does not open there (as access key secrets are bound to their key id).
std::string secret_ad(std::int64_t subscription_id)
{
    return "depot-webhook-secret:" + std::to_string(subscription_id);
}

/// Opens a secret of subscription `id`; one of a row not yet re-sealed (`bound` false: written before
/// schema 0014, or by an older depotd during a rolling upgrade) may still carry the legacy associated data.
result<std::string> open_secret(std::string_view key, std::string_view sealed, std::int64_t id, bool bound)
{
    auto opened = secret_box::open(key, sealed, secret_ad(id));
    if (opened || bound)
        return opened;
    return secret_box::open(key, sealed, legacy_secret_ad);
}

constexpr const char* subscription_select =
    "SELECT s.id, s.team_id, s.url, s.description, s.event_types::text, m.name, "
    "b.name, s.enabled, "
    "s.disabled_reason, s.consecutive_failures, CASE WHEN s.previous_expires_at > "
    "now() THEN " DEPOT_MS("s.previous_expires_at") " END, s.created_by, " DEPOT_MS(
        "s.created_at") ", " DEPOT_MS("s.updated_at") " FROM webhook_subscriptions s "
                                                      "LEFT JOIN models m ON m.id = "
                                                      "s.model_id "
                                                      "LEFT JOIN buckets b ON b.id = "
                                                      "s.bucket_id ";

/// PostgreSQL's text output of a text[] whose elements are event type names (no quoting needed).
std::vector<std::string> parse_types(std::string_view s)
{
    std::vector<std::string> out;
    if (s.size() < 2)
        return out;
    s = s.substr(1, s.size() - 2);
    while (!s.empty()) {
        auto comma = s.find(',');
        out.emplace_back(s.substr(0, comma));
        if (comma == std::string_view::npos)
            break;
        s.remove_prefix(comma + 1);
    }
    return out;
}

std::string types_literal(const std::vector<std::string>& v)
{
    std::string out = "{";
    for (std::size_t i = 0; i < v.size(); ++i)
        out += (i ? "," : "") + v[i];
    return out + "}";
}

webhook_subscription subscription_of(const pg::row& r)
{
    webhook_subscription s{.id = r.i64(0),
                           .team_id = r.i64(1),
                           .url = r.str(2),
                           .description = r.str(3),
                           .event_types = parse_types(r.text(4)),
                           .model = r.opt_str(5),
                           .bucket = r.opt_str(6),
                           .enabled = r.boolean(7),
                           .disabled_reason = r.opt_str(8),
                           .consecutive_failures = static_cast<int>(r.i64(9)),
                           .previous_secret_expires_at = opt_time(r, 10),
                           .created_by = r.str(11),
                           .created_at = from_millis(r.i64(12)),
                           .updated_at = from_millis(r.i64(13))};
    return s;
}

constexpr const char* delivery_select = "SELECT d.id, d.event_id, e.type, d.state, d.attempts, " DEPOT_MS(
    "d.next_attempt_at") ", d.last_status, "
                         "d.last_error, " DEPOT_MS("d.created_at") ", " DEPOT_MS(
                             "d.delivered_at") " FROM webhook_deliveries d JOIN events e ON e.id = "
                                               "d.event_id ";

webhook_delivery delivery_of(const pg::row& r)
{
    webhook_delivery d{.id = r.i64(0),
                       .event_id = r.i64(1),
                       .event_type = r.str(2),
                       .state = r.str(3),
                       .attempts = static_cast<int>(r.i64(4)),
                       .next_attempt_at = from_millis(r.i64(5)),
                       .last_status = std::nullopt,
                       .last_error = r.opt_str(7),
                       .created_at = from_millis(r.i64(8)),
                       .delivered_at = opt_time(r, 9)};
    if (!r.is_null(6))
        d.last_status = static_cast<int>(r.i64(6));
    return d;
}

/// base * 2^(attempt-1), at most `max`, times a jitter factor in [0.5, 1.5).
std::chrono::milliseconds backoff(int attempt, const retry_policy& p)
{
    thread_local std::mt19937_64 rng{std::random_device{}()};
    const double base_ms = static_cast<double>(p.base.count()) * 1000.0;
    const double raw = std::min(base_ms * std::pow(2.0, std::min(attempt - 1, 30)),
                                static_cast<double>(p.max.count()) * 1000.0);
    std::uniform_real_distribution<double> jitter(0.5, 1.5);
    return std::chrono::milliseconds(static_cast<std::int64_t>(raw * jitter(rng)));
}

} // namespace

namespace {

/// The audit row of a subscription change: resource "<team>/webhooks/<id>".
asio::awaitable<void> audit_webhook(pg::connection& c, const audit_context& who, std::string_view action,
                                    std::int64_t team_id, std::int64_t id, std::string details = "{}")
{
    auto team = co_await sql(c, "SELECT name FROM teams WHERE id = $1", team_id);
    const std::string name = team.empty() ? std::string() : team[0].str(0);
    co_await append_audit(c, who, action, name + "/webhooks/" + std::to_string(id), name, std::move(details));
}

} // namespace

asio::awaitable<std::pair<webhook_subscription, std::string>>
webhook_repository::create(const audit_context& who, std::int64_t team_id, webhook_spec spec,
                           std::string_view actor)
{
    std::string secret = new_webhook_secret();
    auto conn = co_await pool_.acquire();
    // The id first: the sealed secret is bound to it.
    auto next = co_await sql(*conn, "SELECT nextval(pg_get_serial_sequence('webhook_subscriptions', 'id'))");
    const std::int64_t id = next[0].i64(0);
    const pg::bytes sealed(secret_box::seal(server_key_, secret, secret_ad(id)));
    co_await conn->execute("BEGIN");
    auto rs = co_await sql(
        *conn,
        "INSERT INTO webhook_subscriptions (id, team_id, url, description, event_types, model_id, bucket_id, "
        "secret_sealed, secret_bound, created_by) OVERRIDING SYSTEM VALUE "
        "VALUES ($1, $2, $3, $4, $5::text[], $6, $7, $8, true, $9) RETURNING id",
        id, team_id, spec.url, spec.description, types_literal(spec.event_types), spec.model_id,
        spec.bucket_id, sealed, actor);
    co_await audit_webhook(*conn, who, "webhook.create", team_id, rs[0].i64(0),
                           "{\"url\":" + audit_quote(spec.url) + "}");
    co_await conn->execute("COMMIT");
    auto row = co_await sql(*conn, std::string(subscription_select) + "WHERE s.id = $1", rs[0].i64(0));
    co_return std::pair{subscription_of(row[0]), std::move(secret)};
}

asio::awaitable<std::vector<webhook_subscription>>
webhook_repository::list(std::int64_t team_id, std::int64_t after_id, std::size_t limit)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(
        *conn, std::string(subscription_select) + "WHERE s.team_id = $1 AND s.id > $2 ORDER BY s.id LIMIT $3",
        team_id, after_id, static_cast<std::int64_t>(limit));
    std::vector<webhook_subscription> out;
    for (auto r : rs)
        out.push_back(subscription_of(r));
    co_return out;
}

asio::awaitable<result<webhook_subscription>> webhook_repository::get(std::int64_t team_id, std::int64_t id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn, std::string(subscription_select) + "WHERE s.team_id = $1 AND s.id = $2",
                           team_id, id);
    if (rs.empty())
        co_return make_error(errc::not_found, "The team has no webhook " + std::to_string(id));
    co_return subscription_of(rs[0]);
}

asio::awaitable<result<webhook_subscription>>
webhook_repository::update(const audit_context& who, std::int64_t team_id, std::int64_t id, webhook_update u)
{
    std::optional<std::string> types;
    if (u.event_types)
        types = types_literal(*u.event_types);
    auto work = [&](pg::connection& c) -> asio::awaitable<result<webhook_subscription>> {
        auto rs = co_await sql(
            c,
            "UPDATE webhook_subscriptions SET url = coalesce($3, url), description = coalesce($4, "
            "description), event_types = coalesce($5::text[], event_types), enabled = coalesce($6, enabled), "
            "disabled_reason = CASE WHEN $6 THEN NULL ELSE disabled_reason END, consecutive_failures = CASE "
            "WHEN $6 THEN 0 ELSE consecutive_failures END, bucket_id = coalesce($7, bucket_id), updated_at = "
            "now(), created_by = CASE WHEN $3 IS NULL THEN created_by ELSE $8 END WHERE team_id = $1 AND id "
            "= "
            "$2 RETURNING id",
            team_id, id, u.url, u.description, types, u.enabled, u.bucket_id, who.actor);
        if (rs.empty())
            co_return make_error(errc::not_found, "The team has no webhook " + std::to_string(id));
        // Deliveries that waited while it was disabled go out now.
        if (u.enabled && *u.enabled)
            co_await sql(c, "SELECT pg_notify('depot_events', '')");
        std::string details = "{";
        if (u.url)
            details += "\"url\":" + audit_quote(*u.url) + ",";
        if (u.enabled)
            details += std::string("\"enabled\":") + (*u.enabled ? "true" : "false") + ",";
        if (u.bucket_id)
            details += "\"bucket_id\":" + std::to_string(*u.bucket_id) + ",";
        if (details.size() > 1)
            details.pop_back();
        details += "}";
        co_await audit_webhook(c, who, "webhook.update", team_id, id, std::move(details));
        auto row = co_await sql(c, std::string(subscription_select) + "WHERE s.id = $1", id);
        co_return subscription_of(row[0]);
    };
    co_return co_await transact(pool_, work);
}

asio::awaitable<result<void>> webhook_repository::remove(const audit_context& who, std::int64_t team_id,
                                                         std::int64_t id)
{
    co_return co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
        auto rs = co_await sql(
            c, "DELETE FROM webhook_subscriptions WHERE team_id = $1 AND id = $2 RETURNING id", team_id, id);
        if (rs.empty())
            co_return make_error(errc::not_found, "The team has no webhook " + std::to_string(id));
        co_await audit_webhook(c, who, "webhook.delete", team_id, id);
        co_return ok();
    });
}

asio::awaitable<result<std::pair<webhook_subscription, std::string>>>
webhook_repository::rotate(const audit_context& who, std::int64_t team_id, std::int64_t id,
                           std::chrono::seconds overlap)
{
    std::string secret = new_webhook_secret();
    const pg::bytes sealed(secret_box::seal(server_key_, secret, secret_ad(id)));
    auto conn = co_await pool_.acquire();
    co_await conn->execute("BEGIN");
    auto rs = co_await sql(*conn,
                           "UPDATE webhook_subscriptions SET previous_sealed = CASE WHEN $4::bigint > 0 THEN "
                           "secret_sealed END, previous_expires_at = CASE WHEN $4::bigint > 0 THEN now() + "
                           "make_interval(secs => $4::bigint) END, secret_sealed = $3, updated_at = now() "
                           "WHERE team_id = $1 AND id = $2 RETURNING id",
                           team_id, id, sealed, static_cast<std::int64_t>(overlap.count()));
    if (rs.empty()) {
        co_await conn->execute("ROLLBACK");
        co_return make_error(errc::not_found, "The team has no webhook " + std::to_string(id));
    }
    co_await audit_webhook(*conn, who, "webhook.rotate", team_id, id);
    co_await conn->execute("COMMIT");
    auto row = co_await sql(*conn, std::string(subscription_select) + "WHERE s.id = $1", id);
    co_return std::pair{subscription_of(row[0]), std::move(secret)};
}

asio::awaitable<result<std::int64_t>> webhook_repository::ping(const audit_context& who, std::int64_t team_id,
                                                               std::int64_t id, std::string_view actor)
{
    auto work = [&](pg::connection& c) -> asio::awaitable<result<std::int64_t>> {
        auto rs = co_await sql(c,
                               "SELECT s.enabled, s.url, t.name FROM webhook_subscriptions s JOIN teams t ON "
                               "t.id = s.team_id WHERE s.team_id = $1 AND s.id = $2 FOR SHARE OF s",
                               team_id, id);
        if (rs.empty())
            co_return make_error(errc::not_found, "The team has no webhook " + std::to_string(id));
        if (!rs[0].boolean(0))
            co_return make_error(errc::conflict, "The webhook is disabled: enable it first");
        const std::string data =
            "{\"team\":" + events::quote(rs[0].text(2)) + ",\"webhook\":" + std::to_string(id) +
            ",\"url\":" + events::quote(rs[0].text(1)) + ",\"actor\":" + events::quote(actor) + "}";
        events::event_spec e{
            .type = "webhook.ping", .team_id = team_id, .data_json = data, .only_subscription = id};
        const std::int64_t event = co_await events::emit(c, e);
        const std::string details = "{\"event_id\":" + audit_quote("evt_" + std::to_string(event)) + "}";
        co_await audit_webhook(c, who, "webhook.ping", team_id, id, details);
        co_return event;
    };
    co_return co_await transact(pool_, work);
}

asio::awaitable<std::vector<webhook_delivery>>
webhook_repository::deliveries(std::int64_t subscription_id, std::int64_t before_id, std::size_t limit,
                               std::optional<std::string> state)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(
        *conn,
        std::string(delivery_select) +
            "WHERE d.subscription_id = $1 AND ($2::bigint = 0 OR d.id < $2::bigint) AND ($4::text IS NULL OR "
            "d.state = $4) ORDER BY d.id DESC LIMIT $3",
        subscription_id, before_id, static_cast<std::int64_t>(limit), state);
    std::vector<webhook_delivery> out;
    for (auto r : rs)
        out.push_back(delivery_of(r));
    co_return out;
}

asio::awaitable<result<webhook_delivery>> webhook_repository::delivery(std::int64_t subscription_id,
                                                                       std::int64_t delivery_id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn, std::string(delivery_select) + "WHERE d.subscription_id = $1 AND d.id = $2",
                           subscription_id, delivery_id);
    if (rs.empty())
        co_return make_error(errc::not_found, "The webhook has no delivery " + std::to_string(delivery_id));
    auto d = delivery_of(rs[0]);
    auto attempts = co_await sql(*conn,
                                 "SELECT number, instance, " DEPOT_MS(
                                     "started_at") ", status, latency_ms, response_excerpt, error FROM "
                                                   "webhook_attempts WHERE delivery_id = $1 ORDER BY number",
                                 delivery_id);
    for (auto r : attempts) {
        webhook_attempt a{.number = static_cast<int>(r.i64(0)),
                          .instance = r.str(1),
                          .started_at = from_millis(r.i64(2)),
                          .status = std::nullopt,
                          .latency_ms = static_cast<int>(r.i64(4)),
                          .response_excerpt = r.str(5),
                          .error = r.opt_str(6)};
        if (!r.is_null(3))
            a.status = static_cast<int>(r.i64(3));
        d.attempt_log.push_back(std::move(a));
    }
    co_return d;
}

asio::awaitable<result<webhook_delivery>> webhook_repository::redeliver(const audit_context& who,
                                                                        std::int64_t subscription_id,
                                                                        std::int64_t delivery_id)
{
    auto work = [&](pg::connection& c) -> asio::awaitable<result<void>> {
        auto rs =
            co_await sql(c,
                         "SELECT d.state, s.team_id FROM webhook_deliveries d JOIN webhook_subscriptions s "
                         "ON s.id = d.subscription_id WHERE d.subscription_id = $1 AND d.id = $2 FOR "
                         "UPDATE OF d",
                         subscription_id, delivery_id);
        if (rs.empty())
            co_return make_error(errc::not_found,
                                 "The webhook has no delivery " + std::to_string(delivery_id));
        if (rs[0].text(0) == "delivering")
            co_return make_error(errc::conflict, "The delivery is being attempted right now");
        co_await sql(
            c,
            "UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = now(), lease_until = "
            "NULL WHERE id = $1",
            delivery_id);
        co_await sql(c, "SELECT pg_notify('depot_events', '')");
        const std::string details = "{\"delivery_id\":" + std::to_string(delivery_id) +
                                    ",\"previous_state\":" + audit_quote(rs[0].text(0)) + "}";
        co_await audit_webhook(c, who, "webhook.redeliver", rs[0].i64(1), subscription_id, details);
        co_return ok();
    };
    if (auto done = co_await transact(pool_, work); !done)
        co_return std::move(done).error();
    co_return co_await delivery(subscription_id, delivery_id);
}

asio::awaitable<std::vector<claimed_delivery>> webhook_repository::claim(std::size_t limit,
                                                                         std::chrono::seconds lease)
{
    auto conn = co_await pool_.acquire();
    // Due: pending and its time has come, or in flight with an expired lease (its depotd died). Not while an
    // earlier event of the same ordering key is still pending or in flight for the subscription. The row
    // locks (SKIP LOCKED) and the re-check of the state under them make each claim, and so each attempt
    // number, one dispatcher's.
    auto rs = co_await sql(
        *conn,
        "WITH c AS (SELECT d.id FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = "
        "d.subscription_id WHERE s.enabled AND ((d.state = 'pending' AND d.next_attempt_at <= now()) OR "
        "(d.state = 'delivering' AND d.lease_until < now())) AND NOT EXISTS (SELECT 1 FROM "
        "webhook_deliveries "
        "p WHERE p.subscription_id = d.subscription_id AND p.ordering_key = d.ordering_key AND p.seq < d.seq "
        "AND p.state IN ('pending', 'delivering')) ORDER BY d.seq LIMIT $1 FOR UPDATE OF d SKIP LOCKED) "
        "UPDATE webhook_deliveries d SET state = 'delivering', attempts = d.attempts + 1, lease_until = "
        "now() + "
        "make_interval(secs => $2::bigint) FROM c WHERE d.id = c.id RETURNING d.id",
        static_cast<std::int64_t>(limit), static_cast<std::int64_t>(lease.count()));
    std::vector<claimed_delivery> out;
    if (rs.empty())
        co_return out;
    std::vector<std::int64_t> ids = first_column(rs);
    auto details = co_await sql(
        *conn,
        "SELECT d.id, d.attempts, s.id, s.team_id, s.url, s.secret_sealed, CASE WHEN s.previous_expires_at > "
        "now() THEN s.previous_sealed END, e.id, e.type, e.payload::text, " DEPOT_MS(
            "e.created_at") ", e.version_id, t.name, s.secret_bound FROM webhook_deliveries d "
                            "JOIN webhook_subscriptions s ON s.id = d.subscription_id JOIN events e ON e.id "
                            "= d.event_id JOIN teams t ON "
                            "t.id = s.team_id WHERE d.id = ANY ($1::bigint[]) ORDER BY d.seq",
        bigint_array(ids));
    for (auto r : details) {
        claimed_delivery d{.id = r.i64(0),
                           .attempt = static_cast<int>(r.i64(1)),
                           .subscription_id = r.i64(2),
                           .team_id = r.i64(3),
                           .url = r.str(4),
                           .secrets = {},
                           .event_id = r.i64(7),
                           .event_type = r.str(8),
                           .data_json = r.str(9),
                           .event_created_at = from_millis(r.i64(10)),
                           .version_id = r.opt_i64(11),
                           .team_name = r.opt_str(12)};
        constexpr std::array<int, 2> secret_columns = {5, 6};
        for (int col : secret_columns) {
            if (r.is_null(col))
                continue;
            auto opened = open_secret(server_key_, r.bytea(col), d.subscription_id, r.boolean(13));
            if (opened)
                d.secrets.push_back(std::move(*opened));
        }
        out.push_back(std::move(d));
    }
    co_return out;
}

asio::awaitable<void> webhook_repository::finish(const claimed_delivery& d, const attempt_outcome& o,
                                                 const retry_policy& p, std::string_view instance)
{
    std::string state = "delivered";
    std::chrono::milliseconds delay{0};
    if (!o.ok) {
        delay = backoff(d.attempt, p);
        const bool too_old = std::chrono::system_clock::now() + delay > d.event_created_at + p.max_age;
        state = too_old ? "failed" : "pending";
    }
    auto work = [&](pg::connection& c) -> asio::awaitable<result<void>> {
        co_await sql(
            c,
            "INSERT INTO webhook_attempts (delivery_id, number, instance, started_at, status, latency_ms, "
            "response_excerpt, error) VALUES ($1, $2, $3, to_timestamp($4::bigint / 1000.0), $5, $6, $7, "
            "$8) ON CONFLICT (delivery_id, number) DO NOTHING",
            d.id, d.attempt, instance, to_millis(o.started_at), o.status, o.latency_ms, o.response_excerpt,
            o.error);
        // Only while the lease is still ours: a lease that expired meanwhile belongs to a newer attempt.
        co_await sql(
            c,
            "UPDATE webhook_deliveries SET state = $3, lease_until = NULL, last_status = $4, last_error = "
            "$5, next_attempt_at = now() + make_interval(secs => $6::bigint / 1000.0), delivered_at = "
            "CASE WHEN $3 = 'delivered' THEN now() END WHERE id = $1 AND attempts = $2 AND state = "
            "'delivering'",
            d.id, d.attempt, state, o.status, o.error, static_cast<std::int64_t>(delay.count()));
        if (o.ok) {
            co_await sql(c,
                         "UPDATE webhook_subscriptions SET consecutive_failures = 0 WHERE id = $1 AND "
                         "consecutive_failures <> 0",
                         d.subscription_id);
            co_return ok();
        }
        auto failures =
            co_await sql(c,
                         "UPDATE webhook_subscriptions SET consecutive_failures = consecutive_failures "
                         "+ 1 WHERE id = $1 RETURNING consecutive_failures, enabled, url",
                         d.subscription_id);
        if (failures.empty() || !failures[0].boolean(1) ||
            failures[0].i64(0) < static_cast<std::int64_t>(p.failure_limit))
            co_return ok();
        const std::string reason =
            std::to_string(failures[0].i64(0)) + " delivery attempts failed in a row (the last: " +
            (o.error ? *o.error : "HTTP " + std::to_string(o.status.value_or(0))) + ")";
        co_await sql(
            c,
            "UPDATE webhook_subscriptions SET enabled = false, disabled_reason = $2, updated_at = now() "
            "WHERE id = $1",
            d.subscription_id, reason);
        // The team's admins learn it through the team's other subscriptions (and the subscription's state).
        boost::json::object data;
        data["team"] = json_string(d.team_name.value_or(""));
        data["webhook"] = d.subscription_id;
        data["url"] = json_string(failures[0].str(2));
        data["reason"] = json_string(reason);
        data["consecutive_failures"] = failures[0].i64(0);
        events::event_spec e{
            .type = "webhook.disabled", .team_id = d.team_id, .data_json = boost::json::serialize(data)};
        co_await events::emit(c, e);
        co_return ok();
    };
    co_await transact(pool_, work);
}

asio::awaitable<std::vector<manifest_entry>> webhook_repository::manifest(std::int64_t version_id,
                                                                          std::size_t limit)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(
        *conn, "SELECT path, size, sha256 FROM model_files WHERE version_id = $1 ORDER BY path LIMIT $2",
        version_id, static_cast<std::int64_t>(limit));
    std::vector<manifest_entry> out;
    for (auto r : rs)
        out.push_back(manifest_entry{.path = r.str(0),
                                     .size = static_cast<std::uint64_t>(r.i64(1)),
                                     .sha256 = r.opt_bytea(2).value_or("")});
    co_return out;
}

asio::awaitable<std::optional<version_ref>> webhook_repository::version_of(std::int64_t version_id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn,
                           "SELECT t.name, m.name, v.number FROM model_versions v JOIN models m ON m.id = "
                           "v.model_id JOIN teams t ON t.id = m.team_id WHERE v.id = $1",
                           version_id);
    if (rs.empty())
        co_return std::nullopt;
    co_return version_ref{
        .team = rs[0].str(0), .model = rs[0].str(1), .number = static_cast<int>(rs[0].i64(2))};
}

asio::awaitable<std::size_t> webhook_repository::bind_legacy_secrets()
{
    auto conn = co_await pool_.acquire();
    auto rs =
        co_await sql(*conn, "SELECT id, secret_sealed, previous_sealed FROM webhook_subscriptions WHERE "
                            "NOT secret_bound ORDER BY id");
    std::size_t bound = 0;
    for (auto r : rs) {
        const std::int64_t id = r.i64(0);
        auto reseal = [&](const std::string& sealed) -> std::optional<std::string> {
            auto opened = open_secret(server_key_, sealed, id, false);
            if (!opened)
                return std::nullopt;
            return secret_box::seal(server_key_, *opened, secret_ad(id));
        };
        const std::string current = r.bytea(1);
        auto resealed = reseal(current);
        if (!resealed)
            throw std::runtime_error("cannot unseal the secret of webhook subscription " +
                                     std::to_string(id) + ": wrong server key?");
        std::optional<std::string> previous = r.is_null(2) ? std::nullopt : std::optional(r.bytea(2));
        std::optional<pg::bytes> previous_resealed;
        // A previous secret that does not open only costs its second signature; it expires anyway.
        if (previous)
            if (auto p = reseal(*previous))
                previous_resealed = pg::bytes(std::move(*p));
        const std::optional<pg::bytes> previous_read =
            previous ? std::optional(pg::bytes(*previous)) : std::nullopt;
        auto changed = co_await sql(
            *conn,
            "UPDATE webhook_subscriptions SET secret_sealed = $2, previous_sealed = $3, "
            "secret_bound = true WHERE id = $1 AND NOT secret_bound AND secret_sealed = "
            "$4 AND previous_sealed IS NOT DISTINCT FROM $5 RETURNING id",
            id, pg::bytes(std::move(*resealed)), previous_resealed, pg::bytes(current), previous_read);
        bound += changed.size();
    }
    co_return bound;
}

asio::awaitable<std::optional<std::string>> webhook_repository::event_key_of(std::int64_t team_id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn, "SELECT access_key_id FROM team_event_keys WHERE team_id = $1", team_id);
    if (rs.empty())
        co_return std::nullopt;
    co_return rs[0].str(0);
}

asio::awaitable<void> webhook_repository::forget_event_key(std::int64_t team_id)
{
    auto conn = co_await pool_.acquire();
    co_await sql(*conn, "DELETE FROM team_event_keys WHERE team_id = $1", team_id);
}

asio::awaitable<bool> webhook_repository::claim_event_key(std::int64_t team_id,
                                                          std::string_view access_key_id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn,
                           "INSERT INTO team_event_keys (team_id, access_key_id) VALUES ($1, $2) "
                           "ON CONFLICT (team_id) DO NOTHING RETURNING 1",
                           team_id, access_key_id);
    co_return !rs.empty();
}

asio::awaitable<webhook_repository::queue_state> webhook_repository::queue()
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await conn->query(
        "SELECT count(*), coalesce(extract(epoch FROM now() - min(created_at)) * 1000, 0)::bigint"
        "  FROM webhook_deliveries WHERE state IN ('pending', 'delivering')");
    co_return queue_state{.depth = rs[0].i64(0),
                          .oldest_seconds = static_cast<double>(rs[0].i64(1)) / 1000.0};
}

} // namespace depot::registry
