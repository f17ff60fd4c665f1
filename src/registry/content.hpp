#pragma once
/// \file
/// Content: the steps every write shares. `ingest` streams a body into a new committed blob while it
/// computes MD5 and SHA-256 and checks what the client declared; `publish_blob` registers the blob inside the
/// caller's transaction, deduplicating on (sha256, size); `release_segments` drops references; and
/// `remove_blobs` deletes, after the commit, the blobs that lost their last reference.

#include "common/checksum.hpp"
#include "common/result.hpp"
#include "registry/byte_source.hpp"
#include "registry/pg/pg.hpp"
#include "registry/types.hpp"
#include "storage/blob_store.hpp"

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

struct ingest_limits
{
    /// The body must have exactly this many bytes when set.
    std::optional<std::uint64_t> content_length;
    std::uint64_t max_size = 5ull << 30;
    /// Raw digests the client asserted; empty = none.
    std::string expected_md5;
    std::string expected_sha256;
    /// A flexible checksum to compute (and verify when a value is asserted). CRC64NVME is always computed.
    std::optional<checksum_algorithm> checksum;
    /// The asserted value (base64), when it came in a header.
    std::optional<std::string> checksum_value;
    /// Where an asserted value arrives in a trailer: called once the body has ended.
    std::function<std::optional<std::string>()> trailer_checksum;
    /// Deduplicate the content against stored blobs (the bucket's dedup mode); see `ingested::share`.
    bool dedup = true;
};

/// A committed blob holding a verified body. `store_id` is empty for an empty body (no blob is written).
struct ingested
{
    std::string store_id;
    std::uint64_t size = 0;
    std::string md5;       ///< raw
    std::string sha256;    ///< raw
    std::string crc64nvme; ///< raw, always computed
    /// The requested algorithm's raw checksum (equal to crc64nvme when none was requested).
    checksum_algorithm algorithm = checksum_algorithm::crc64nvme;
    std::string checksum;
    /// Publish as a shared blob (deduplicated on (sha256, size)); false keeps the blob private to this write.
    bool share = true;
};

/// Streams `body` into a new blob and commits it once every check passed. On any error the blob is aborted:
/// nothing remains. Errors: incomplete_body, entity_too_large, bad_digest (Content-MD5 or a flexible
/// checksum), invalid_argument (malformed checksum value), invalid_request (an announced checksum never
/// came), content_sha256_mismatch, and the body's and the store's errors.
asio::awaitable<result<ingested>> ingest(storage::blob_store& store, byte_source& body,
                                         const ingest_limits& limits);

/// A reference to registered content.
struct blob_ref
{
    std::int64_t row = 0;
    std::string store_id;
};

/// Inside a transaction: takes one reference on the content of `in`. When identical content (same SHA-256
/// and size) is already registered, the reference goes to it and `in.store_id` becomes garbage, which is
/// appended to `unreferenced` for removal after the commit. Precondition: `in.store_id` is not empty.
asio::awaitable<blob_ref> publish_blob(pg::connection& c, const ingested& in,
                                       std::vector<std::string>& unreferenced);

/// Inside a transaction: takes one more reference on each listed blob row (one per occurrence).
asio::awaitable<void> add_references(pg::connection& c, const std::vector<std::int64_t>& blob_rows);

/// Inside a transaction: drops one reference per occurrence; blobs left without references are deleted from
/// the registry and their store ids appended to `unreferenced`.
asio::awaitable<void> drop_references(pg::connection& c, const std::vector<std::int64_t>& blob_rows,
                                      std::vector<std::string>& unreferenced);

/// Inside a transaction: writes the manifest of version `row` (ordinal = position in `segments`).
asio::awaitable<void> insert_segments(pg::connection& c, std::int64_t row,
                                      const std::vector<segment>& segments);

/// After a commit: removes the listed blobs from the store (best effort; failures are logged and left to
/// the collector).
asio::awaitable<void> remove_blobs(storage::blob_store& store, std::vector<std::string> store_ids);

} // namespace depot::registry
