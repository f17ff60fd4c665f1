#include "registry/service/content.hpp"

#include "common/hash.hpp"
#include "common/log.hpp"
#include "registry/repo/content.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/service/sse.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <memory>
#include <tuple>

namespace depot::registry {
namespace {

constexpr std::size_t io_chunk = 1 << 20;

/// Reads until `buf` is full or the body ends, so hashing and the store see whole 1 MiB chunks: a socket
/// read returns what has arrived (often 64 KiB or less), and each blob-store write has a cost of its own.
asio::awaitable<result<std::size_t>> read_full(byte_source& body, std::span<std::byte> buf)
{
    std::size_t filled = 0;
    while (filled < buf.size()) {
        auto n = co_await body.read_some(buf.subspan(filled));
        if (!n)
            co_return std::move(n).error();
        if (*n == 0)
            break;
        filled += *n;
    }
    co_return filled;
}

/// Seconds of `intent_lease`, as the statements take them.
std::int64_t lease_seconds()
{
    return static_cast<std::int64_t>(intent_lease.count());
}

error intent_lost()
{
    return make_error(errc::internal,
                      "A piece of the body was reclaimed before the body was published; send it again.");
}

/// Names `store_id`, about to be committed, as piece number `held` (from 0) of the body `upload`. False when
/// one of the body's earlier intents is gone: its lease ran out and the collector deleted it, so its piece
/// may be gone too, and the body cannot be published.
asio::awaitable<bool> record_intent(pg::pool& pool, const std::string& upload, const std::string& store_id,
                                    std::size_t held)
{
    auto conn = co_await pool.acquire();
    const std::string& owner = intent_owner();
    const std::int64_t lease = lease_seconds();
    auto before = co_await insert_intent(*conn, store_id, owner, upload, lease);
    co_return before == static_cast<std::int64_t>(held);
}

/// Deletes the intents of a body that will not be published (best effort: they lapse with the lease).
asio::awaitable<void> delete_intents(pg::pool& pool, const std::string& upload)
{
    if (upload.empty())
        co_return;
    try {
        auto conn = co_await pool.acquire();
        co_await delete_upload_intents(*conn, upload);
    } catch (const std::exception& e) {
        log::warn("deleting the intents of a failed write failed; they lapse with their lease",
                  {{"error", e.what()}});
    }
}

} // namespace

const std::string& intent_owner()
{
    static const std::string owner = to_hex(random_bytes(16));
    return owner;
}

asio::awaitable<void> renew_intents(pg::pool& pool)
{
    auto conn = co_await pool.acquire();
    const std::int64_t lease = lease_seconds();
    co_await renew_owner_intents(*conn, intent_owner(), lease);
}

std::vector<std::string> ingested::store_ids() const
{
    std::vector<std::string> ids;
    ids.reserve(blobs.size());
    for (const auto& b : blobs)
        ids.push_back(b.store_id);
    return ids;
}

asio::awaitable<result<ingested>> ingest(storage::blob_store& store, pg::pool& pool, byte_source& body,
                                         const ingest_limits& limits)
{
    // Every byte is hashed once per digest something reads, never twice with the same algorithm where one
    // pass covers both uses: MD5 (the ETag) and CRC64NVME (the stored checksum) always; SHA-256 of the whole
    // body when it is the content identity, the signed payload or the requested checksum; SHA-256 of each
    // dedup piece only when the body may be more than one piece (otherwise the piece is the body).
    const std::uint64_t piece_limit =
        limits.dedup && limits.sealed == sealing::none && limits.segment_size > 0 ? limits.segment_size
                                                                                  : UINT64_MAX;
    const bool may_split =
        piece_limit != UINT64_MAX && (!limits.content_length || *limits.content_length > piece_limit);
    const bool sha256_checksum = limits.checksum == checksum_algorithm::sha256;
    const bool whole_sha =
        limits.body_sha256 || !limits.expected_sha256.empty() || sha256_checksum || !may_split;
    hasher md5(digest_kind::md5);
    std::optional<hasher> sha; // the whole body's SHA-256, when whole_sha
    if (whole_sha)
        sha.emplace(digest_kind::sha256);
    checksummer crc64(checksum_algorithm::crc64nvme);
    std::optional<checksummer> requested; // a checksum none of the above already computes
    if (limits.checksum && *limits.checksum != checksum_algorithm::crc64nvme && !sha256_checksum)
        requested.emplace(*limits.checksum);
    hasher piece_sha(digest_kind::sha256); // used when may_split
    std::vector<stored_blob> pieces;       // committed
    std::unique_ptr<storage::blob_writer> writer;
    std::uint64_t piece_size = 0;
    std::string upload; // names the intents, once a piece needed one
    std::uint64_t total = 0;
    std::optional<error> failure;
    std::exception_ptr crash;

    try {
        // Sized to the body when its length is known (a 4 KiB PUT need not allocate and fault in 1 MiB), and
        // left uninitialised: every byte used is read into first.
        std::size_t buf_size = io_chunk;
        if (limits.content_length)
            buf_size = static_cast<std::size_t>(
                std::clamp<std::uint64_t>(*limits.content_length, 64 << 10, io_chunk));
        auto memory = std::make_unique_for_overwrite<std::byte[]>(buf_size);
        const std::span<std::byte> buf(memory.get(), buf_size);
        while (!failure) {
            auto n = co_await read_full(body, buf);
            if (!n) {
                failure = std::move(n).error();
                break;
            }
            if (*n == 0)
                break;
            const std::uint64_t before = total;
            total += *n;
            if (total > limits.max_size) {
                failure = make_error(errc::entity_too_large,
                                     "Your proposed upload exceeds the maximum allowed size");
                break;
            }
            if (limits.content_length && total > *limits.content_length) {
                failure = make_error(errc::incomplete_body, "The body is longer than the declared length");
                break;
            }
            std::span<const std::byte> data(buf.data(), *n);
            md5.update(data);
            if (sha)
                sha->update(data);
            crc64.update(data);
            if (requested)
                requested->update(data);
            std::uint64_t at = before;
            while (!data.empty()) {
                if (!writer) {
                    std::uint64_t hint = 0;
                    if (limits.content_length)
                        hint = std::min(piece_limit, *limits.content_length - at);
                    storage::write_options options{.size_hint = hint};
                    auto w = co_await store.create(options);
                    if (!w) {
                        failure = std::move(w).error();
                        break;
                    }
                    writer = std::move(*w);
                    piece_size = 0;
                }
                const auto take =
                    static_cast<std::size_t>(std::min<std::uint64_t>(data.size(), piece_limit - piece_size));
                auto piece = data.first(take);
                if (may_split)
                    piece_sha.update(piece);
                auto written = co_await writer->write(piece);
                if (!written) {
                    failure = std::move(written).error();
                    break;
                }
                piece_size += take;
                at += take;
                data = data.subspan(take);
                if (piece_size == piece_limit) {
                    // A full segment: committed now, removed again if the body fails a check later. Unless it
                    // is the whole body, the body goes on arriving for as long as the client takes, while no
                    // `blobs` row names the piece: an intent does, from before the commit until the publish.
                    const bool whole_body =
                        pieces.empty() && limits.content_length && at == *limits.content_length;
                    if (!upload.empty() || !whole_body) {
                        if (upload.empty())
                            upload = to_hex(random_bytes(16));
                        if (!co_await record_intent(pool, upload, writer->id(), pieces.size())) {
                            failure = intent_lost();
                            break;
                        }
                    }
                    auto committed = co_await writer->commit();
                    if (!committed) {
                        failure = std::move(committed).error();
                        break;
                    }
                    stored_blob full;
                    full.store_id = writer->id();
                    full.size = piece_size;
                    full.sha256 = piece_sha.finish();
                    pieces.push_back(std::move(full));
                    writer.reset();
                    piece_sha.reset();
                }
            }
        }
    } catch (...) {
        crash = std::current_exception();
    }
    ingested out;
    out.share = limits.dedup && limits.sealed == sealing::none;
    out.sealed = limits.sealed;
    out.size = total;
    if (!failure && !crash) {
        out.md5 = md5.finish();
        if (sha)
            out.sha256 = sha->finish();
        out.crc64nvme = crc64.finish();
        out.algorithm = limits.checksum.value_or(checksum_algorithm::crc64nvme);
        out.checksum = requested ? requested->finish() : sha256_checksum ? out.sha256 : out.crc64nvme;
        if (limits.content_length && total != *limits.content_length)
            failure = make_error(
                errc::incomplete_body,
                "You did not provide the number of bytes specified by the Content-Length HTTP header");
        else if (!limits.expected_md5.empty() && limits.expected_md5 != out.md5)
            failure =
                make_error(errc::bad_digest, "The Content-MD5 you specified did not match what we received.");
        else if (!limits.expected_sha256.empty() && limits.expected_sha256 != out.sha256)
            failure =
                make_error(errc::content_sha256_mismatch,
                           "The provided 'x-amz-content-sha256' header does not match what was computed.");
        else if (limits.checksum) {
            auto value = limits.checksum_value;
            if (!value && limits.trailer_checksum)
                value = limits.trailer_checksum();
            if (!value) {
                if (limits.trailer_checksum)
                    failure =
                        make_error(errc::invalid_request, "The announced checksum trailer did not arrive.");
            } else if (auto verified = verify_checksum(*limits.checksum, *value, out.checksum); !verified) {
                failure = std::move(verified).error();
            }
        }
    }
    if (!failure && !crash && writer && !upload.empty()) {
        // The last piece of a body whose earlier pieces have intents has one too, so that the publish checks
        // every piece alike.
        try {
            if (!co_await record_intent(pool, upload, writer->id(), pieces.size()))
                failure = intent_lost();
        } catch (...) {
            crash = std::current_exception();
        }
    }
    if (!failure && !crash && writer) {
        auto committed = co_await writer->commit();
        if (!committed)
            failure = std::move(committed).error();
        else {
            stored_blob last;
            last.store_id = writer->id();
            last.size = piece_size;
            last.sha256 = may_split ? piece_sha.finish() : out.sha256;
            pieces.push_back(std::move(last));
        }
    }
    if (failure || crash) {
        if (writer)
            co_await writer->abort();
        std::vector<std::string> committed;
        for (const auto& p : pieces)
            committed.push_back(p.store_id);
        co_await remove_blobs(store, std::move(committed));
        co_await delete_intents(pool, upload);
        if (crash)
            std::rethrow_exception(crash);
        co_return std::move(*failure);
    }
    // A body in one piece: that piece's digests are the body's.
    if (pieces.size() == 1) {
        if (!out.sha256.empty())
            pieces[0].sha256 = out.sha256;
        pieces[0].md5 = out.md5;
    }
    out.blobs = std::move(pieces);
    out.intent = std::move(upload);
    co_return out;
}

asio::awaitable<void> discard_ingested(storage::blob_store& store, pg::pool& pool, const ingested& in)
{
    co_await remove_blobs(store, in.store_ids());
    co_await delete_intents(pool, in.intent);
}

namespace {

/// The positions of `in.blobs` in content order (SHA-256, then size).
std::vector<std::size_t> content_order(const ingested& in)
{
    std::vector<std::size_t> order(in.blobs.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::tie(in.blobs[a].sha256, in.blobs[a].size) <
               std::tie(in.blobs[b].sha256, in.blobs[b].size);
    });
    return order;
}

} // namespace

std::vector<pg::statement> publish_statements(const ingested& in)
{
    // A bucket without deduplication keeps its blob private: no lookup, and no later write reuses it. So
    // does an encrypted body (its blobs are sealed, schema 0025): encrypted content never deduplicates.
    std::vector<pg::statement> out;
    out.reserve(in.blobs.size());
    for (const auto i : content_order(in)) {
        const auto& b = in.blobs[i];
        if (in.share)
            out.push_back(shared_blob_statement(b.store_id, b.size, pg::bytes(b.sha256), pg::bytes(b.md5)));
        else
            out.push_back(private_blob_statement(b.store_id, b.size, pg::bytes(b.sha256), pg::bytes(b.md5),
                                                 std::string(sealing_column(in.sealed))));
    }
    // Last, after the content rows: the intents give way to them. Row locks make this and the collector's
    // deletion of lapsed intents take turns: whichever comes second finds nothing.
    if (!in.intent.empty())
        out.push_back(take_intents_statement(in.intent));
    return out;
}

result<std::vector<segment>> published_segments(const ingested& in, std::span<const pg::result_set> results,
                                                std::vector<std::string>& unreferenced, int part_number)
{
    // Every piece must still have had its intent: one the collector deleted (its lease ran out) means the
    // piece may have been removed, and a version naming it would be an acknowledged object without bytes.
    if (!in.intent.empty() && static_cast<std::size_t>(results.back().size()) != in.blobs.size()) {
        log::error("a body's intents were gone at publish; the write fails",
                   {{"pieces", in.blobs.size()}, {"intents", results.back().size()}});
        return intent_lost();
    }
    std::vector<segment> segments(in.blobs.size());
    std::size_t next = 0;
    for (const auto i : content_order(in)) {
        const auto& b = in.blobs[i];
        const auto& rs = results[next++];
        segment s{.blob_row = rs[0].i64(0),
                  .store_id = rs[0].str(1),
                  .offset = 0,
                  .length = b.size,
                  .part_number = part_number,
                  .sealed = in.sealed};
        if (s.store_id != b.store_id)
            unreferenced.push_back(b.store_id);
        segments[i] = std::move(s);
    }
    return segments;
}

asio::awaitable<result<std::vector<segment>>>
publish_blobs(pg::connection& c, const ingested& in, std::vector<std::string>& unreferenced, int part_number)
{
    // Every piece in one round trip.
    auto results = co_await c.query_all(publish_statements(in));
    co_return published_segments(in, results, unreferenced, part_number);
}

asio::awaitable<void> add_references(pg::connection& c, const std::vector<std::int64_t>& blob_rows)
{
    if (blob_rows.empty())
        co_return;
    const std::string rows = bigint_array(blob_rows);
    co_await add_blob_references(c, rows);
}

asio::awaitable<void> drop_references(pg::connection& c, const std::vector<std::int64_t>& blob_rows,
                                      std::vector<std::string>& unreferenced)
{
    if (blob_rows.empty())
        co_return;
    const std::string rows = bigint_array(blob_rows);
    // Decrement, then delete the rows that reached zero in the same statement order; a concurrent writer
    // that wants the same content either took its reference first (count stays above zero) or waits on
    // the row lock and then inserts a fresh blob.
    co_await subtract_blob_references(c, rows);
    auto gone = co_await delete_unreferenced_blobs(c, rows);
    for (auto& store_id : gone)
        unreferenced.push_back(std::move(store_id));
}

std::array<std::string, 4> segment_arrays(const std::vector<segment>& segments)
{
    std::vector<std::int64_t> blobs, offsets, lengths, parts;
    for (const auto& s : segments) {
        blobs.push_back(s.blob_row);
        offsets.push_back(static_cast<std::int64_t>(s.offset));
        lengths.push_back(static_cast<std::int64_t>(s.length));
        parts.push_back(s.part_number);
    }
    return {bigint_array(blobs), bigint_array(offsets), bigint_array(lengths), bigint_array(parts)};
}

asio::awaitable<void> insert_segments(pg::connection& c, std::int64_t row,
                                      const std::vector<segment>& segments)
{
    if (segments.empty())
        co_return;
    auto a = segment_arrays(segments);
    defer_insert_segments(c, row, a[0], a[1], a[2], a[3]);
}

asio::awaitable<void> remove_blobs(storage::blob_store& store, std::vector<std::string> store_ids)
{
    for (const auto& id : store_ids) {
        auto removed = co_await store.remove(id);
        if (!removed && removed.error().code != errc::not_found)
            log::warn("blob removal failed; the collector will retry",
                      {{"blob", id}, {"error", removed.error().message}});
    }
}

asio::awaitable<void> discard_new_blobs(storage::blob_store& store, pg::pool& pool, const ingested& in,
                                        std::exception_ptr failure)
{
    // Only an error PostgreSQL reported (a SQLSTATE) proves the transaction aborted. A lost connection, a
    // timeout or a cancellation may have come after COMMIT was sent and before its answer arrived.
    bool rolled_back = false;
    std::string what = "unknown error";
    try {
        std::rethrow_exception(failure);
    } catch (const pg::error& e) {
        rolled_back = !e.sqlstate().empty();
        what = e.what();
    } catch (const std::exception& e) {
        what = e.what();
    } catch (...) {
    }
    if (rolled_back) {
        co_await discard_ingested(store, pool, in);
        co_return;
    }
    log::warn("publishing transaction failed with its outcome unknown; its new blobs are left to the blob "
              "collector",
              {{"blobs", std::to_string(in.blobs.size())}, {"error", what}});
}

} // namespace depot::registry
