#include "registry/content.hpp"

#include "common/hash.hpp"
#include "common/log.hpp"
#include "registry/sql_util.hpp"

#include <exception>
#include <map>

namespace depot::registry {
namespace {

constexpr std::size_t io_chunk = 1 << 20;

} // namespace

asio::awaitable<result<ingested>> ingest(storage::blob_store& store, byte_source& body,
                                         const ingest_limits& limits)
{
    hasher md5(digest_kind::md5);
    hasher sha(digest_kind::sha256);
    checksummer crc64(checksum_algorithm::crc64nvme);
    std::optional<checksummer> requested;
    if (limits.checksum && *limits.checksum != checksum_algorithm::crc64nvme)
        requested.emplace(*limits.checksum);
    std::unique_ptr<storage::blob_writer> writer;
    std::uint64_t total = 0;
    std::optional<error> failure;
    std::exception_ptr crash;

    try {
        std::vector<std::byte> buf(io_chunk);
        for (;;) {
            auto n = co_await body.read_some(buf);
            if (!n) {
                failure = std::move(n).error();
                break;
            }
            if (*n == 0)
                break;
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
            sha.update(data);
            crc64.update(data);
            if (requested)
                requested->update(data);
            if (!writer) {
                storage::write_options options{.size_hint = limits.content_length.value_or(0)};
                auto w = co_await store.create(options);
                if (!w) {
                    failure = std::move(w).error();
                    break;
                }
                writer = std::move(*w);
            }
            auto written = co_await writer->write(data);
            if (!written) {
                failure = std::move(written).error();
                break;
            }
        }
    } catch (...) {
        crash = std::current_exception();
    }
    ingested out;
    out.share = limits.dedup;
    out.size = total;
    if (!failure && !crash) {
        out.md5 = md5.finish();
        out.sha256 = sha.finish();
        out.crc64nvme = crc64.finish();
        out.algorithm = limits.checksum.value_or(checksum_algorithm::crc64nvme);
        out.checksum = requested ? requested->finish() : out.crc64nvme;
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
    if (!failure && !crash && writer) {
        auto committed = co_await writer->commit();
        if (!committed)
            failure = std::move(committed).error();
    }
    if (failure || crash) {
        if (writer)
            co_await writer->abort();
        if (crash)
            std::rethrow_exception(crash);
        co_return std::move(*failure);
    }
    if (writer)
        out.store_id = writer->id();
    co_return out;
}

asio::awaitable<blob_ref> publish_blob(pg::connection& c, const ingested& in,
                                       std::vector<std::string>& unreferenced)
{
    const pg::bytes sha(in.sha256);
    const pg::bytes md5(in.md5);
    // A bucket without deduplication keeps its blob private: no lookup, and no later write reuses it.
    const std::string_view statement =
        in.share ? "INSERT INTO blobs (store_id, size, sha256, md5, refcount) VALUES ($1, $2, $3, $4, 1) "
                   "ON CONFLICT (sha256, size) WHERE shared DO UPDATE SET refcount = blobs.refcount + 1 "
                   "RETURNING id, store_id"
                 : "INSERT INTO blobs (store_id, size, sha256, md5, refcount, shared) "
                   "VALUES ($1, $2, $3, $4, 1, false) RETURNING id, store_id";
    auto rs = co_await sql(c, statement, in.store_id, in.size, sha, md5);
    blob_ref ref{rs[0].i64(0), rs[0].str(1)};
    if (ref.store_id != in.store_id)
        unreferenced.push_back(in.store_id);
    co_return ref;
}

asio::awaitable<void> add_references(pg::connection& c, const std::vector<std::int64_t>& blob_rows)
{
    if (blob_rows.empty())
        co_return;
    const std::string rows = bigint_array(blob_rows);
    co_await sql(
        c,
        "WITH r AS (SELECT unnest($1::bigint[]) AS id), n AS (SELECT id, count(*) AS k FROM r GROUP BY id) "
        "UPDATE blobs b SET refcount = b.refcount + n.k FROM n WHERE b.id = n.id",
        rows);
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
    co_await sql(
        c,
        "WITH r AS (SELECT unnest($1::bigint[]) AS id), n AS (SELECT id, count(*) AS k FROM r GROUP BY id) "
        "UPDATE blobs b SET refcount = b.refcount - n.k FROM n WHERE b.id = n.id",
        rows);
    auto gone = co_await sql(
        c, "DELETE FROM blobs WHERE id = ANY($1::bigint[]) AND refcount = 0 RETURNING store_id", rows);
    for (auto r : gone)
        unreferenced.push_back(r.str(0));
}

asio::awaitable<void> insert_segments(pg::connection& c, std::int64_t row,
                                      const std::vector<segment>& segments)
{
    if (segments.empty())
        co_return;
    std::vector<std::int64_t> blobs, offsets, lengths, parts;
    for (const auto& s : segments) {
        blobs.push_back(s.blob_row);
        offsets.push_back(static_cast<std::int64_t>(s.offset));
        lengths.push_back(static_cast<std::int64_t>(s.length));
        parts.push_back(s.part_number);
    }
    const std::string b = bigint_array(blobs), o = bigint_array(offsets), l = bigint_array(lengths),
                      p = bigint_array(parts);
    co_await sql(
        c,
        "INSERT INTO object_segments (version_row, ordinal, blob_id, blob_offset, length, part_number) "
        "SELECT $1, s.ord - 1, s.blob, s.off, s.len, nullif(s.part, 0)::int "
        "FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[]) "
        "WITH ORDINALITY AS s(blob, off, len, part, ord)",
        row, b, o, l, p);
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

} // namespace depot::registry
