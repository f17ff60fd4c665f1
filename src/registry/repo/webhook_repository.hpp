#pragma once
/// \file
/// Webhook subscriptions, deliveries and attempts (schema/0007_events.sql): what the REST API manages and
/// what the dispatcher claims and records.
///
/// Secrets are "whsec_" + base64 of 24 random bytes (Standard Webhooks); the HMAC key is the decoded bytes.
/// They are sealed with the server key and shown only when created or rotated. Thread-safe (all state is in
/// PostgreSQL).

#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/types.hpp"
#include "registry/vocabulary.hpp"

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

struct webhook_subscription
{
    std::int64_t id = 0;
    std::int64_t team_id = 0;
    std::string url;
    std::string description;
    std::vector<std::string> event_types; ///< empty = all
    std::optional<std::string> model;     ///< model filter (name in the team)
    std::optional<std::string> bucket;    ///< bucket filter
    bool enabled = true;
    std::optional<std::string> disabled_reason;
    int consecutive_failures = 0;
    std::optional<time_point> previous_secret_expires_at; ///< set while a rotated-out secret still signs
    std::string created_by;
    time_point created_at;
    time_point updated_at;
};

struct webhook_spec
{
    std::string url;
    std::string description;
    std::vector<std::string> event_types;
    std::optional<std::int64_t> model_id;
    std::optional<std::int64_t> bucket_id;
};

struct webhook_update
{
    std::optional<std::string> url;
    std::optional<std::string> description;
    std::optional<std::vector<std::string>> event_types;
    std::optional<bool> enabled;
    /// A new bucket filter; the caller checks that it may see that bucket.
    std::optional<std::int64_t> bucket_id;
};

struct webhook_attempt
{
    int number = 0;
    std::string instance;
    time_point started_at;
    std::optional<int> status;
    int latency_ms = 0;
    std::string response_excerpt;
    std::optional<std::string> error;
};

struct webhook_delivery
{
    std::int64_t id = 0;
    std::int64_t event_id = 0;
    std::string event_type;
    std::string state; ///< pending, delivering, delivered, failed
    int attempts = 0;
    time_point next_attempt_at;
    std::optional<int> last_status;
    std::optional<std::string> last_error;
    time_point created_at;
    std::optional<time_point> delivered_at;
    std::vector<webhook_attempt> attempt_log; ///< filled by `delivery` only
};

/// A delivery a dispatcher has leased for one attempt.
struct claimed_delivery
{
    std::int64_t id = 0;
    int attempt = 0; ///< this attempt's number (1 = first)
    std::int64_t subscription_id = 0;
    std::int64_t team_id = 0;
    std::string url;
    std::vector<std::string> secrets; ///< current first, then the previous one during a rotation
    std::int64_t event_id = 0;
    std::string event_type;
    std::string data_json;
    time_point event_created_at;
    std::optional<std::int64_t> version_id;
    std::optional<std::string> team_name;
};

/// How an attempt went, as the dispatcher saw it.
struct attempt_outcome
{
    bool ok = false;
    std::optional<int> status;
    int latency_ms = 0;
    std::string response_excerpt;
    std::optional<std::string> error;
    time_point started_at;
};

struct retry_policy
{
    std::chrono::seconds base{10};
    std::chrono::seconds max{3600};
    std::chrono::seconds max_age{3 * 24 * 3600};
    unsigned failure_limit = 20;
};

/// One file of a version's manifest, for event payloads.
struct manifest_entry
{
    std::string path;
    std::uint64_t size = 0;
    std::string sha256; ///< raw; empty when not known yet
};

struct version_ref
{
    std::string team;
    std::string model;
    int number = 0;
};

class webhook_repository
{
public:
    webhook_repository(pg::pool& pool, std::string server_key)
        : pool_(pool), server_key_(std::move(server_key))
    {}

    /// Returns the subscription and its secret (shown once).
    asio::awaitable<std::pair<webhook_subscription, std::string>>
    create(const audit_context& who, std::int64_t team_id, webhook_spec spec, std::string_view actor);
    /// By id, after `after_id`.
    asio::awaitable<std::vector<webhook_subscription>> list(std::int64_t team_id, std::int64_t after_id,
                                                            std::size_t limit);
    /// not_found when the team has no such subscription.
    asio::awaitable<result<webhook_subscription>> get(std::int64_t team_id, std::int64_t id);
    /// Enabling resets the failure count. not_found.
    asio::awaitable<result<webhook_subscription>> update(const audit_context& who, std::int64_t team_id,
                                                         std::int64_t id, webhook_update u);
    /// Deletes the subscription with its deliveries and attempts. not_found.
    asio::awaitable<result<void>> remove(const audit_context& who, std::int64_t team_id, std::int64_t id);
    /// A new secret; the current one keeps signing (a second signature) for `overlap`. not_found.
    asio::awaitable<result<std::pair<webhook_subscription, std::string>>>
    rotate(const audit_context& who, std::int64_t team_id, std::int64_t id, std::chrono::seconds overlap);
    /// Queues a webhook.ping event for this subscription only. not_found; conflict when it is disabled.
    asio::awaitable<result<std::int64_t>> ping(const audit_context& who, std::int64_t team_id,
                                               std::int64_t id, std::string_view actor);

    /// Newest first, below `before_id` (0 = from the newest); `state` filters when set.
    asio::awaitable<std::vector<webhook_delivery>> deliveries(std::int64_t subscription_id,
                                                              std::int64_t before_id, std::size_t limit,
                                                              std::optional<std::string> state);
    /// With its attempts. not_found.
    asio::awaitable<result<webhook_delivery>> delivery(std::int64_t subscription_id,
                                                       std::int64_t delivery_id);
    /// Queues the delivery again now (a new attempt). not_found; conflict while it is in flight.
    asio::awaitable<result<webhook_delivery>>
    redeliver(const audit_context& who, std::int64_t subscription_id, std::int64_t delivery_id);

    // The dispatcher's side.
    /// Leases up to `limit` due deliveries (FOR UPDATE SKIP LOCKED) for `lease`; none whose earlier event of
    /// the same ordering key is still pending for the subscription.
    asio::awaitable<std::vector<claimed_delivery>> claim(std::size_t limit, std::chrono::seconds lease);
    /// Records the attempt and schedules what follows (delivered, retry with backoff, failed past the
    /// maximum age, the subscription disabled after too many failures in a row).
    asio::awaitable<void> finish(const claimed_delivery& d, const attempt_outcome& o, const retry_policy& p,
                                 std::string_view instance);
    /// Deliveries not yet delivered or given up, and the age of the oldest (from the partial index of
    /// pending deliveries, so cheap with a long history): the queue the metrics show.
    struct queue_state
    {
        std::int64_t depth = 0;
        double oldest_seconds = 0;
    };
    asio::awaitable<queue_state> queue();
    /// The manifest of a version, by path, at most `limit` entries.
    asio::awaitable<std::vector<manifest_entry>> manifest(std::int64_t version_id, std::size_t limit);

    /// Re-seals, bound to their rows, the secrets of subscriptions sealed before schema 0014 (with one
    /// constant associated data, so that a sealed secret copied onto another row opened there), and marks
    /// them bound. Run by depotd at its start; safe with several processes (each row changes only if it
    /// still holds what was read). Returns the rows re-sealed.
    asio::awaitable<std::size_t> bind_legacy_secrets();
    asio::awaitable<std::optional<version_ref>> version_of(std::int64_t version_id);

    // The team's event-link key (server/webhooks/manifest.hpp), one per team.
    /// Its access key id, if the team has one recorded.
    asio::awaitable<std::optional<std::string>> event_key_of(std::int64_t team_id);
    /// Forgets the team's recorded key (it was revoked or deleted).
    asio::awaitable<void> forget_event_key(std::int64_t team_id);
    /// Records `access_key_id` as the team's key; false when another one was recorded first.
    asio::awaitable<bool> claim_event_key(std::int64_t team_id, std::string_view access_key_id);

private:
    pg::pool& pool_;
    std::string server_key_;
};

} // namespace depot::registry
