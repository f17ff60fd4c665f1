#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The SQL of listing current keys (schema: object_versions, users): what
/// registry/service/object_listing.cpp runs on the connection it passes. The folding into common prefixes
/// and the seeks past them are the service's.

#include "registry/pg/pg.hpp"
#include "registry/service/object_service.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

/// One batch of a listing scan: where it starts and how far it may go.
struct listing_batch
{
    std::int64_t bucket_id = 0;
    std::string bound;      ///< the first key (inclusive) or the key after which the batch starts
    bool inclusive = false; ///< whether `bound` itself may be returned
    std::string upper;      ///< keys stay below this one ("" = no bound)
    std::int64_t limit = 0; ///< at most this many rows
    std::int64_t as_of = 0; ///< 0: the current keys; else the keys as of this commit sequence number
};

/// The visible (non-delete-marker) keys of the bucket in the batch's range, in UTF-8 byte order, with size,
/// ETag, last modification and owner.
asio::awaitable<std::vector<listing_entry>> list_keys_batch(pg::connection& c, const listing_batch& batch);

} // namespace depot::registry
