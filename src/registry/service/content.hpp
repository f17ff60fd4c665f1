#pragma once
/// \file
/// Content: the steps every write shares. `ingest` streams a body into new committed blobs while it computes
/// MD5 and SHA-256 and checks what the client declared; `publish_blobs` registers them inside the caller's
/// transaction, deduplicating each on (sha256, size); `drop_references` releases them; and `remove_blobs`
/// deletes, after the commit, the blobs that lost their last reference.
///
/// Segmenting: with deduplication on, a body longer than `dedup_segment_size` is stored as consecutive blobs
/// of that size (the last one shorter), each deduplicated on its own. The size is the aws cli's and boto3's
/// default multipart chunk size, so a file written by one PUT and the same file uploaded in 8 MiB parts (or
/// in parts of any multiple of 8 MiB) end up on the same blobs, and so do checkpoints that share aligned
/// 8 MiB runs. The cost is a second SHA-256 over bodies longer than one segment.
///
/// Intents: a segment is committed to the store as soon as it is full, long before the `blobs` row naming it
/// is written (at publish, once the whole body has arrived and passed its checks), and the blob collector
/// removes committed blobs that no row names once they are older than the grace age. So every piece of a
/// body cut into several is first named by an intent row (schema 0013, `blob_intents`), written before the
/// piece is committed; the collector never takes a blob an intent names. The transaction that publishes the
/// body deletes its intents and fails (errc::internal, no version written) unless every one was still
/// there: a piece is never published after the collector may have taken it. A failed write deletes its
/// intents with its pieces. An intent carries a lease of its depotd process (`intent_owner`), which every
/// depotd renews every `intent_renewal` (`renew_intents`); the collector deletes intents whose lease ran out
/// (`intent_lease` after the last renewal: the process crashed, or lost the database that long), after
/// which their pieces are ordinary unreferenced blobs. A body stored as one blob needs no intent: it is
/// committed when the body has ended, just before the publishing transaction, within the grace age.

#include "common/byte_source.hpp"
#include "common/checksum.hpp"
#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/types.hpp"
#include "storage/blob_store.hpp"

#include <array>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

inline constexpr std::uint64_t dedup_segment_size = 8ull << 20;

/// How long an intent outlives the last renewal of its lease, and how often depotd renews it. The lease is
/// a minute so that the pieces of a crashed process's uploads come back soon after the crash, and renewed
/// four times in it so that a slow database round trip or two cannot let it lapse.
inline constexpr std::chrono::seconds intent_lease{60};
inline constexpr std::chrono::seconds intent_renewal{15};

/// This process's name on the intents it writes: random, made once per process, so that a restarted
/// depotd (even with the same --instance-id) never renews the intents of its previous life. Thread-safe.
const std::string& intent_owner();

/// Extends the lease of every intent of this process (`intent_owner`) to `intent_lease` from now. Throws on
/// database failures.
asio::awaitable<void> renew_intents(pg::pool& pool);

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
    /// With `dedup`, the body is cut into blobs of this many bytes (0 = one blob).
    std::uint64_t segment_size = dedup_segment_size;
    /// Whether `ingested::sha256` (the whole body's SHA-256: an object's content identity) is wanted. A part
    /// leaves it off: nothing reads a part's digest, so its bytes are hashed with SHA-256 only where
    /// something needs it — a signed payload (`expected_sha256`), a SHA-256 checksum, or the digests of
    /// the pieces dedup cuts (a body in one piece is its own piece). See docs/ARCHITECTURE.md, "hashing".
    bool body_sha256 = true;
    /// The body is written through a sealed view of the store (registry/service/sse.hpp) with this sealing:
    /// its blobs are recorded as sealed and never shared, whatever `dedup` says.
    sealing sealed = sealing::none;
};

/// One committed blob holding a consecutive piece of a body.
struct stored_blob
{
    std::string store_id;
    std::uint64_t size = 0;
    std::string sha256; ///< raw, of this piece
    std::string md5;    ///< raw, of this piece when it is the whole body; empty otherwise (not computed)
};

/// A verified body in committed blobs: `blobs` holds its pieces in order (none for an empty body).
struct ingested
{
    std::vector<stored_blob> blobs;
    std::uint64_t size = 0;
    std::string md5;    ///< raw
    std::string sha256; ///< raw; empty when `ingest_limits::body_sha256` was off and nothing else needed it
    std::string crc64nvme; ///< raw, always computed
    /// The requested algorithm's raw checksum (equal to crc64nvme when none was requested).
    checksum_algorithm algorithm = checksum_algorithm::crc64nvme;
    std::string checksum;
    /// Publish as a shared blob (deduplicated on (sha256, size)); false keeps the blob private to this write.
    bool share = true;
    /// How the blobs are stored (ingest_limits::sealed); sealed blobs are never shared.
    sealing sealed = sealing::none;
    /// Names the intent rows of `blobs` (one per blob) when the body was cut into several; empty otherwise.
    std::string intent;

    /// The store ids of `blobs`, for removal when the write does not commit.
    std::vector<std::string> store_ids() const;
};

/// Streams `body` into new blobs and commits the last one once every check passed; a body cut into several
/// blobs has an intent row for each (see the file comment) written through `pool`. On any error every blob
/// is aborted or removed, and the intents deleted: nothing remains. Errors: incomplete_body,
/// entity_too_large, bad_digest (Content-MD5 or a flexible checksum), invalid_argument (malformed checksum
/// value), invalid_request (an announced checksum never came), content_sha256_mismatch, internal (an
/// earlier piece's intent was taken by the collector), and the body's and the store's errors. Throws on
/// database failures (after removing the blobs).
asio::awaitable<result<ingested>> ingest(storage::blob_store& store, pg::pool& pool, byte_source& body,
                                         const ingest_limits& limits);

/// After the publishing transaction of `in` rolled back: removes its blobs and deletes its intents (best
/// effort: failures are logged, and left to the collector and the lease).
asio::awaitable<void> discard_ingested(storage::blob_store& store, pg::pool& pool, const ingested& in);

/// A reference to registered content.
struct blob_ref
{
    std::int64_t row = 0;
    std::string store_id;
};

/// Inside a transaction: takes one reference on the content of each of `in.blobs`. When identical content
/// (same SHA-256 and size) is already registered, the reference goes to it and the new blob becomes garbage,
/// which is appended to `unreferenced` for removal after the commit. Deletes the intents of `in`. Returns the
/// body's manifest: one segment per blob, in order, tagged with `part_number`; internal when an intent was
/// gone (the collector may have taken its piece: the caller must roll back).
asio::awaitable<result<std::vector<segment>>> publish_blobs(pg::connection& c, const ingested& in,
                                                            std::vector<std::string>& unreferenced,
                                                            int part_number = 0);

/// publish_blobs in two halves, for a caller that sends the statements in one round trip with others of its
/// own (pg::connection::query_all): the statements, in the order they must run (content order, so that two
/// writers sharing pieces lock them alike), then the manifest from their results, in that order.
std::vector<pg::statement> publish_statements(const ingested& in);
result<std::vector<segment>> published_segments(const ingested& in, std::span<const pg::result_set> results,
                                                std::vector<std::string>& unreferenced, int part_number = 0);

/// Inside a transaction: takes one more reference on each listed blob row (one per occurrence).
asio::awaitable<void> add_references(pg::connection& c, const std::vector<std::int64_t>& blob_rows);

/// Inside a transaction: drops one reference per occurrence; blobs left without references are deleted from
/// the registry and their store ids appended to `unreferenced`.
asio::awaitable<void> drop_references(pg::connection& c, const std::vector<std::int64_t>& blob_rows,
                                      std::vector<std::string>& unreferenced);

/// A manifest as the four bigint arrays (blob rows, offsets, lengths, part numbers) a statement unnests.
std::array<std::string, 4> segment_arrays(const std::vector<segment>& segments);

/// Inside a transaction: writes the manifest of version `row` (ordinal = position in `segments`). Deferred
/// (pg::connection::defer): it goes out with the transaction's next statement or COMMIT.
asio::awaitable<void> insert_segments(pg::connection& c, std::int64_t row,
                                      const std::vector<segment>& segments);

/// After a commit: removes the listed blobs from the store (best effort; failures are logged and left to
/// the collector).
asio::awaitable<void> remove_blobs(storage::blob_store& store, std::vector<std::string> store_ids);

/// After the publishing transaction of `in` threw `failure`: discards `in` (discard_ingested) if it
/// certainly rolled back (PostgreSQL reported an error, a SQLSTATE, which aborts the transaction). A lost
/// connection, a timeout or a cancellation may have come after COMMIT was sent and before its answer
/// arrived: then the blobs may be named by a committed version, so they are left to the blob collector,
/// which removes them after the grace age (and the lease of their intents) only if no row names them; the
/// log says so.
asio::awaitable<void> discard_new_blobs(storage::blob_store& store, pg::pool& pool, const ingested& in,
                                        std::exception_ptr failure);

} // namespace depot::registry
