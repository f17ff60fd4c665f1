#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The event outbox (schema/0007_events.sql): the one way changes announce themselves. `emit` runs inside
/// the transaction of the change, so the event and its deliveries commit with it or not at all, and the
/// transaction's NOTIFY wakes the webhook dispatchers of every depotd only once it commits.
///
/// Event types and what they carry (the `data` of the webhook payload, documented in openapi/ under
/// `webhooks:`): model.created; version.created / submitted / approved / rejected / deprecated / archived
/// (team, model, version; the manifest and presigned URLs are added at delivery time from the frozen
/// version); alias.updated (alias, from, to version numbers, null when created / deleted); snapshot.created;
/// object.created / object.deleted (only for buckets with object events on); webhook.ping;
/// webhook.disabled.

#include "registry/pg/pg.hpp"
#include "registry/vocabulary.hpp"

#include <array>
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace depot::registry::events {

namespace asio = boost::asio;

// event_types, is_event_type and the NOTIFY channel: registry/vocabulary.hpp.

struct event_spec
{
    std::string_view type;
    std::optional<std::int64_t> team_id;
    std::optional<std::int64_t> model_id;
    std::optional<std::int64_t> version_id;
    std::optional<std::int64_t> bucket_id;
    /// Events with the same key are delivered to a subscription in commit order: "m<model id>" for model
    /// events, "o<bucket id>/<key>" for object events; empty = unordered.
    std::string ordering_key;
    std::string data_json = "{}"; ///< a JSON object
    /// Deliver to this subscription only (ping), whatever its filters.
    std::optional<std::int64_t> only_subscription;
};

/// Inside a transaction: records the event and one delivery per enabled matching subscription, and sends
/// NOTIFY when there is one. Takes a transaction-scoped advisory lock on the ordering key (held until the
/// commit), so events of one key get increasing `seq` in commit order. Returns the event id.
asio::awaitable<std::int64_t> emit(pg::connection& c, const event_spec& e);

/// Inside a transaction: takes the model's event lock (the advisory lock `emit` takes for the model's
/// ordering key) until the commit. A transaction that changes a model and emits its events takes it first,
/// so such transactions serialize per model in one lock order (no deadlocks between them) and anything
/// they read about the model (e.g. where an alias pointed) is what the previous one committed.
asio::awaitable<void> lock_model(pg::connection& c, std::int64_t model_id);

/// Model events: the team, model and ordering key ("m<model id>") are set from the arguments.
asio::awaitable<std::int64_t> emit_model_event(pg::connection& c, std::string_view type, std::int64_t team_id,
                                               std::int64_t model_id, std::int64_t bucket_id,
                                               std::optional<std::int64_t> version_id, std::string data_json);

/// Object events: emitted only when the bucket opted in (one cheap query otherwise).
asio::awaitable<void> emit_object_event(pg::connection& c, std::string_view type, std::int64_t bucket_id,
                                        std::string_view key, std::string_view version_id, std::uint64_t size,
                                        std::string_view etag, std::string_view actor);

/// The same for a caller that already read the bucket's name where `object_events` is on.
asio::awaitable<void> emit_object_event(pg::connection& c, std::string_view bucket_name,
                                        std::string_view type, std::int64_t bucket_id, std::string_view key,
                                        std::string_view version_id, std::uint64_t size,
                                        std::string_view etag, std::string_view actor);

/// JSON string escaping for hand-built payloads.
std::string quote(std::string_view s);

} // namespace depot::registry::events
