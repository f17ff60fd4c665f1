#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The SQL of models (schema: models, read with their team's and bucket's names): what
/// registry/service/model_registry.cpp runs, inside the transaction (or on the connection) the service
/// passes. The model row is locked here where the service asks for it; the revision check, the model_events
/// row and the outbox event are the service's.

#include "registry/pg/pg.hpp"
#include "registry/service/model_registry.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

/// Inserts the team's model from the spec (its policy overrides, unset ones null); returns its id, nullopt
/// when the team already has a model of that name.
asio::awaitable<std::optional<std::int64_t>>
insert_model(pg::connection& c, std::int64_t team_id, const model_spec& spec, std::string_view created_by);

/// Model `id`, which exists (std::out_of_range when it does not).
asio::awaitable<model> read_model(pg::connection& c, std::int64_t id);

/// The team's models named after `after`, by name, at most `limit`.
asio::awaitable<std::vector<model>> models_after(pg::connection& c, std::int64_t team_id,
                                                 std::string_view after, std::int64_t limit);

/// Whether another team has a model in bucket `bucket_id` whose prefix overlaps `prefix` (one holds the
/// other). Takes the bucket's model-prefix lock (a transaction-level
/// advisory lock) first, so that two teams cannot create overlapping models at the same time.
asio::awaitable<bool> overlaps_another_teams_model(pg::connection& c, std::int64_t bucket_id,
                                                   std::string_view prefix, std::int64_t team_id);

/// The team's model `name`, if any.
asio::awaitable<std::optional<model>> find_model(pg::connection& c, std::int64_t team_id,
                                                 std::string_view name);

/// Locks model `id` FOR UPDATE and returns its revision; nullopt when it is gone.
asio::awaitable<std::optional<std::int64_t>> lock_model_revision(pg::connection& c, std::int64_t id);

/// Applies the update's set fields to model `id` and moves its revision and updated_at on.
asio::awaitable<void> update_model_row(pg::connection& c, std::int64_t id, const model_update& update);

} // namespace depot::registry
