#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The SQL of content (schema: blobs, blob_intents, object_segments): what registry/service/content.cpp
/// runs, each statement on the connection (or inside the transaction) the service passes, or returned as a
/// pg::statement for the service to send with others in one round trip (query_all). The order of the
/// statements, the leases and what happens to the stored bytes are the service's.

#include "registry/pg/pg.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

// --- intents ---------------------------------------------------------------------------------------------

/// Inserts the intent naming `store_id` as a piece of body `upload`, held by `owner` for `lease_seconds`;
/// returns how many intents the body had before this one.
asio::awaitable<std::int64_t> insert_intent(pg::connection& c, const std::string& store_id,
                                            const std::string& owner, const std::string& upload,
                                            std::int64_t lease_seconds);

/// Deletes the intents of body `upload`.
asio::awaitable<void> delete_upload_intents(pg::connection& c, const std::string& upload);

/// Extends the lease of every intent `owner` holds to `lease_seconds` from now.
asio::awaitable<void> renew_owner_intents(pg::connection& c, const std::string& owner,
                                          std::int64_t lease_seconds);

/// Deletes the intents of body `upload`, returning the store id of each (sent after the content rows).
pg::statement take_intents_statement(const std::string& upload);

// --- content rows ----------------------------------------------------------------------------------------

/// Inserts a shared blob row (refcount 1), or takes a reference on the shared row of the same (sha256, size);
/// returns id, store_id.
pg::statement shared_blob_statement(const std::string& store_id, std::uint64_t size, const pg::bytes& sha256,
                                    const pg::bytes& md5);

/// Inserts a private blob row (refcount 1, never reused), sealed as `sealed` ("" none); returns id, store_id.
pg::statement private_blob_statement(const std::string& store_id, std::uint64_t size, const pg::bytes& sha256,
                                     const pg::bytes& md5, const std::string& sealed);

/// Adds a reference to each blob row of `rows` (a bigint array literal; a row listed twice gets two).
asio::awaitable<void> add_blob_references(pg::connection& c, const std::string& rows);

/// Drops a reference from each blob row of `rows` (as add_blob_references).
asio::awaitable<void> subtract_blob_references(pg::connection& c, const std::string& rows);

/// Deletes the rows of `rows` without references; returns their store ids.
asio::awaitable<std::vector<std::string>> delete_unreferenced_blobs(pg::connection& c,
                                                                    const std::string& rows);

/// Queues (pg::connection::defer) the segments of object row `row`: parallel bigint array literals of blob
/// rows, offsets, lengths and part numbers (0: none), in order.
void defer_insert_segments(pg::connection& c, std::int64_t row, const std::string& blobs,
                           const std::string& offsets, const std::string& lengths, const std::string& parts);

} // namespace depot::registry
