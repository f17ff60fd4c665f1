#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The SQL of S3 versioning on objects (schema: object_versions, buckets, users): what
/// registry/service/object_versions.cpp runs, each statement inside the transaction (or on the connection)
/// the service passes. Row locks are taken here exactly where the service asks for them; the order of the
/// steps, the bucket's lock, the events and the audit rows are the service's.

#include "registry/pg/pg.hpp"
#include "registry/service/object_service.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

// --- deleting ---------------------------------------------------------------------------------------------

/// A version row of a key, as a delete finds it.
struct located_version
{
    std::int64_t row = 0;
    bool is_current = false;
    bool is_delete_marker = false;
};

/// The row of `version_id` of a key, locked FOR UPDATE; nullopt when it does not exist (or was purged).
asio::awaitable<std::optional<located_version>> lock_version_row(pg::connection& c, std::int64_t bucket_id,
                                                                 std::string_view key,
                                                                 const std::string& version_id);

/// What a conditional delete compares: the version row's ETag, size, last modification and kind.
struct version_conditions_facts
{
    std::string etag;
    std::int64_t size = 0;
    std::int64_t last_modified_ms = 0;
    bool is_delete_marker = false;
};

/// The facts of version row `row`; nullopt when the row is gone.
asio::awaitable<std::optional<version_conditions_facts>> version_condition_facts(pg::connection& c,
                                                                                 std::int64_t row);

/// The owner of bucket `bucket_id` (the bucket row must exist: the caller holds its lock).
asio::awaitable<std::string> bucket_owner_of(pg::connection& c, std::int64_t bucket_id);

/// The newest remaining (not purged) version row of a key; nullopt when none is left.
asio::awaitable<std::optional<std::int64_t>> newest_version_row(pg::connection& c, std::int64_t bucket_id,
                                                                std::string_view key);

// --- the bucket's versioning state ----------------------------------------------------------------------

struct versioning_change
{
    std::string bucket_name;
    bool refused_by_object_lock = false; ///< Object Lock keeps versioning Enabled: nothing changed
};

/// Sets the bucket's versioning state (stored form) unless Object Lock is on; nullopt when the bucket is
/// gone.
asio::awaitable<std::optional<versioning_change>>
update_bucket_versioning(pg::connection& c, std::int64_t bucket_id, std::string_view mode);

// --- ListObjectVersions --------------------------------------------------------------------------------

/// The created_seq of version `version_id` of a key (not purged); nullopt when there is none.
asio::awaitable<std::optional<std::int64_t>> version_created_seq(pg::connection& c, std::int64_t bucket_id,
                                                                 std::string_view key,
                                                                 std::string_view version_id);

/// One listed version row, with its created_seq (where the scan resumes).
struct version_row
{
    version_listing_entry entry;
    std::int64_t created_seq = 0;
};

/// The versions of key `key` older than created_seq `within`, newest first, at most `limit`.
asio::awaitable<std::vector<version_row>> key_versions_before(pg::connection& c, std::int64_t bucket_id,
                                                              std::string_view key, std::int64_t within,
                                                              std::int64_t limit);

/// The versions of the keys after (`inclusive`: from) `bound` and below `upper` ("" = no bound), by key then
/// newest first, at most `limit`.
asio::awaitable<std::vector<version_row>> versions_from(pg::connection& c, std::int64_t bucket_id,
                                                        std::string_view bound, bool inclusive,
                                                        std::string_view upper, std::int64_t limit);

} // namespace depot::registry
