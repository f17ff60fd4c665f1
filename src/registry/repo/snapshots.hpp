#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The SQL of snapshots (table snapshots, and the purged object_versions rows only snapshots still see):
/// what registry/service/snapshot_service.hpp runs inside its transactions, which hold the bucket's write
/// lock where the service takes it.

#include "registry/pg/pg.hpp"
#include "registry/types.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

// snapshot: registry/types.hpp.

/// Inserts a snapshot at the next commit sequence number; nullopt when the bucket already has one named so.
asio::awaitable<std::optional<snapshot>> insert_snapshot(pg::connection& c, std::int64_t bucket_id,
                                                         std::string_view name, std::string_view prefix,
                                                         std::string_view created_by);

/// The bucket's snapshot `name`, if any.
asio::awaitable<std::optional<snapshot>> find_snapshot(pg::connection& c, std::int64_t bucket_id,
                                                       std::string_view name);

/// The bucket's snapshots named after `after`, by name, at most `limit`.
asio::awaitable<std::vector<snapshot>> snapshots_after(pg::connection& c, std::int64_t bucket_id,
                                                       std::string_view after, std::int64_t limit);

/// Deletes the bucket's snapshot `name`; false when there was none.
asio::awaitable<bool> delete_snapshot(pg::connection& c, std::int64_t bucket_id, std::string_view name);

/// The keys of the bucket's purged version rows that no remaining snapshot sees (what
/// delete_unseen_purged_versions would delete), by key.
asio::awaitable<std::vector<std::string>> unseen_purged_keys(pg::connection& c, std::int64_t bucket_id);

/// Deletes the bucket's purged version rows that no remaining snapshot sees; returns the blob rows their
/// segments referenced (read from the statement's snapshot, before the cascade).
asio::awaitable<std::vector<std::int64_t>> delete_unseen_purged_versions(pg::connection& c,
                                                                         std::int64_t bucket_id);

} // namespace depot::registry
