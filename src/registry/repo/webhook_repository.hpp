#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
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
#include "registry/webhook_types.hpp"

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

// webhook_subscription, webhook_delivery, claimed_delivery, ...: registry/webhook_types.hpp.

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
    /// Enabling resets the failure count. A new url makes `who` the subscription's `created_by`: whoever
    /// chose where its events go answers for it (and its subscription stops when they stop being an admin).
    /// not_found.
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
    using queue_state = webhook_queue_state;
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
