#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The SQL of reading object versions (schema: object_versions with its users row, object_segments, blobs,
/// object_parts): what registry/service/object_service.cpp runs on the connection (or inside the
/// transaction) it passes. A version is read with its segments in one statement. PutObject's statements
/// (the bucket's lock, the references, the current row, the version) are repo/versions' and
/// service/content's; the order of the steps, the events and the audit rows are the service's.

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

/// The current version of a key (a delete marker too); nullopt when the key has none.
asio::awaitable<std::optional<object_handle>>
current_object_version(pg::connection& c, std::int64_t bucket_id, std::string_view key);

/// Version `version_id` of a key unless it was purged; nullopt when there is none.
asio::awaitable<std::optional<object_handle>> object_version_by_id(pg::connection& c, std::int64_t bucket_id,
                                                                   std::string_view key,
                                                                   const std::string& version_id);

/// The version of a key that was current at commit sequence number `as_of`, unless it was a delete marker.
asio::awaitable<std::optional<object_handle>> object_version_as_of(pg::connection& c, std::int64_t bucket_id,
                                                                   std::string_view key, std::int64_t as_of);

/// The parts of object row `version_row` (a multipart upload's), by part number.
asio::awaitable<std::vector<object_part_info>> object_parts_of(pg::connection& c, std::int64_t version_row);

/// A copy's source: object row `row`, locked FOR SHARE, when it is not a delete marker and is current (or
/// `pinned`: a version the request named); nullopt otherwise.
asio::awaitable<std::optional<object_handle>> share_copy_source(pg::connection& c, std::int64_t row,
                                                                bool pinned);

} // namespace depot::registry
