#include "registry/object_service.hpp"

#include "common/hash.hpp"
#include "common/log.hpp"
#include "registry/sql_util.hpp"
#include "registry/transaction.hpp"

#include <exception>
#include <nlohmann/json.hpp>

namespace depot::registry {
namespace {

constexpr std::size_t io_chunk = 1 << 20;

std::string metadata_json(const object_headers& h)
{
    auto j = nlohmann::json::array();
    for (const auto& [name, value] : h.user_metadata)
        j.push_back({name, value});
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<std::pair<std::string, std::string>> metadata_from_json(std::string_view text)
{
    std::vector<std::pair<std::string, std::string>> out;
    auto j = nlohmann::json::parse(text);
    for (const auto& pair : j)
        out.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<std::string>());
    return out;
}

/// Columns of a version row followed by its segments as JSON, in the order `version_from` reads them.
constexpr const char* version_columns =
    "o.id, o.bucket_id, o.key, o.version_id, o.is_delete_marker, o.size, o.etag, o.sha256, o.owner_id, "
    "u.display_name, " DEPOT_MS(
        "o.last_modified") ", o.content_type, o.content_encoding, o.content_disposition, "
                           "o.content_language, o.cache_control, o.expires, o.user_metadata::text, "
                           "o.parts_count, "
                           "(SELECT coalesce(json_agg(json_build_array(s.blob_id, b.store_id, s.blob_offset, "
                           "s.length) "
                           "ORDER BY s.ordinal), '[]') FROM object_segments s JOIN blobs b ON b.id = "
                           "s.blob_id "
                           "WHERE s.version_row = o.id)::text";

object_handle handle_from(const pg::row& r)
{
    object_handle h;
    auto& v = h.version;
    v.row_id = r.i64(0);
    v.bucket_id = r.i64(1);
    v.key = r.str(2);
    v.version_id = r.str(3);
    v.is_delete_marker = r.boolean(4);
    v.size = static_cast<std::uint64_t>(r.i64(5));
    v.etag = r.str(6);
    v.sha256 = r.is_null(7) ? std::string() : r.bytea(7);
    v.owner_id = r.str(8);
    v.owner_display_name = r.str(9);
    v.last_modified = from_millis(r.i64(10));
    v.headers.content_type = r.opt_str(11);
    v.headers.content_encoding = r.opt_str(12);
    v.headers.content_disposition = r.opt_str(13);
    v.headers.content_language = r.opt_str(14);
    v.headers.cache_control = r.opt_str(15);
    v.headers.expires = r.opt_str(16);
    v.headers.user_metadata = metadata_from_json(r.text(17));
    if (!r.is_null(18))
        v.parts_count = static_cast<int>(r.i64(18));
    for (const auto& s : nlohmann::json::parse(r.text(19)))
        h.segments.push_back(segment{.blob_row = s.at(0).get<std::int64_t>(),
                                     .store_id = s.at(1).get<std::string>(),
                                     .offset = s.at(2).get<std::uint64_t>(),
                                     .length = s.at(3).get<std::uint64_t>()});
    return h;
}

/// Drops the references a version holds and deletes the row. Returns the store ids of blobs that lost their
/// last reference (their rows are deleted here; the bytes are removed by the caller after commit).
asio::awaitable<std::vector<std::string>> release_version(pg::connection& c, std::int64_t row)
{
    co_await sql(c,
                 "WITH seg AS (SELECT blob_id, count(*) AS n FROM object_segments WHERE version_row = $1 "
                 "GROUP BY blob_id) "
                 "UPDATE blobs b SET refcount = b.refcount - seg.n FROM seg WHERE b.id = seg.blob_id",
                 row);
    auto gone = co_await sql(c,
                             "WITH dead AS (SELECT DISTINCT s.blob_id FROM object_segments s "
                             "JOIN blobs b ON b.id = s.blob_id WHERE s.version_row = $1 AND b.refcount = 0), "
                             "v AS (DELETE FROM object_versions WHERE id = $1) "
                             "SELECT blob_id FROM dead",
                             row);
    std::vector<std::string> store_ids;
    for (auto r : gone) {
        auto del =
            co_await sql(c, "DELETE FROM blobs WHERE id = $1 AND refcount = 0 RETURNING store_id", r.i64(0));
        if (!del.empty())
            store_ids.push_back(del[0].str(0));
    }
    co_return store_ids;
}

/// Locks the bucket row against deletion for the transaction; false when the bucket is gone.
asio::awaitable<bool> lock_bucket(pg::connection& c, std::int64_t bucket_id)
{
    auto rs = co_await sql(c, "SELECT 1 FROM buckets WHERE id = $1 FOR SHARE", bucket_id);
    co_return !rs.empty();
}

/// Locks and returns the current version row of a key, if any.
asio::awaitable<std::optional<std::int64_t>> lock_current(pg::connection& c, std::int64_t bucket_id,
                                                          std::string_view key)
{
    auto rs = co_await sql(c,
                           "SELECT id FROM object_versions WHERE bucket_id = $1 AND key = $2 "
                           "AND superseded_seq IS NULL FOR UPDATE",
                           bucket_id, key);
    if (rs.empty())
        co_return std::nullopt;
    co_return rs[0].i64(0);
}

/// Inserts a version row; returns (row id, last_modified ms).
asio::awaitable<std::pair<std::int64_t, std::int64_t>> insert_version(pg::connection& c,
                                                                      const object_version& v)
{
    const auto& h = v.headers;
    // Optional parameters are built before the co_await: GCC 12 destroys class temporaries of a conditional
    // expression inside a co_await operand twice.
    pg::param sha = v.sha256.empty() ? pg::param(std::nullopt) : pg::param(pg::bytes(v.sha256));
    pg::param parts = v.parts_count ? pg::param(*v.parts_count) : pg::param(std::nullopt);
    const std::string metadata = metadata_json(h);
    auto rs = co_await sql(
        c,
        "INSERT INTO object_versions (bucket_id, key, version_id, created_seq, size, etag, sha256, owner_id, "
        "content_type, content_encoding, content_disposition, content_language, cache_control, expires, "
        "user_metadata, parts_count) VALUES ($1, $2, 'null', nextval('commit_seq'), $3, $4, $5, $6, $7, $8, "
        "$9, "
        "$10, $11, $12, $13::jsonb, $14) RETURNING id, " DEPOT_MS("last_modified"),
        v.bucket_id, v.key, v.size, v.etag, sha, v.owner_id, h.content_type, h.content_encoding,
        h.content_disposition, h.content_language, h.cache_control, h.expires, metadata, parts);
    co_return std::pair{rs[0].i64(0), rs[0].i64(1)};
}

} // namespace

asio::awaitable<result<object_version>> object_service::put_object(put_object_request req)
{
    hasher md5(digest_kind::md5);
    hasher sha(digest_kind::sha256);
    std::unique_ptr<storage::blob_writer> writer;
    std::uint64_t total = 0;
    std::optional<error> failure;
    std::exception_ptr crash;

    // Phase 1: stream the bytes into a new blob. Nothing is visible to anyone yet.
    try {
        std::vector<std::byte> buf(io_chunk);
        for (;;) {
            auto n = co_await req.body->read_some(buf);
            if (!n) {
                failure = std::move(n).error();
                break;
            }
            if (*n == 0)
                break;
            total += *n;
            if (total > req.max_size) {
                failure = make_error(errc::entity_too_large,
                                     "Your proposed upload exceeds the maximum allowed size");
                break;
            }
            if (req.content_length && total > *req.content_length) {
                failure = make_error(errc::incomplete_body, "The body is longer than the declared length");
                break;
            }
            std::span<const std::byte> data(buf.data(), *n);
            md5.update(data);
            sha.update(data);
            if (!writer) {
                storage::write_options options{.size_hint = req.content_length.value_or(0)};
                auto w = co_await store_.create(options);
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
    std::string md5_raw, sha_raw;
    if (!failure && !crash) {
        md5_raw = md5.finish();
        sha_raw = sha.finish();
        if (req.content_length && total != *req.content_length)
            failure = make_error(
                errc::incomplete_body,
                "You did not provide the number of bytes specified by the Content-Length HTTP header");
        else if (!req.expected_md5.empty() && req.expected_md5 != md5_raw)
            failure =
                make_error(errc::bad_digest, "The Content-MD5 you specified did not match what we received.");
        else if (!req.expected_sha256.empty() && req.expected_sha256 != sha_raw)
            failure =
                make_error(errc::content_sha256_mismatch,
                           "The provided 'x-amz-content-sha256' header does not match what was computed.");
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

    // Phase 2: publish in one transaction.
    object_version v;
    v.bucket_id = req.target->id;
    v.key = req.key;
    v.version_id = "null";
    v.size = total;
    v.etag = to_hex(md5_raw);
    v.sha256 = sha_raw;
    v.owner_id = req.owner_id;
    v.headers = std::move(req.headers);
    const std::string our_blob = writer ? writer->id() : std::string();
    std::vector<std::string> unreferenced;

    try {
        auto published =
            co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<object_version>> {
                unreferenced.clear();
                if (!co_await lock_bucket(c, v.bucket_id))
                    co_return make_error(errc::no_such_bucket, "The specified bucket does not exist");
                std::optional<std::int64_t> blob_row;
                std::string blob_store_id;
                if (!our_blob.empty()) {
                    // Identical content (same SHA-256 and size) is stored once: take a reference on the
                    // existing blob if there is one, and drop ours after the commit.
                    auto b = co_await sql(c,
                                          "INSERT INTO blobs (store_id, size, sha256, md5, refcount) VALUES "
                                          "($1, $2, $3, $4, 1) "
                                          "ON CONFLICT (sha256, size) DO UPDATE SET refcount = "
                                          "blobs.refcount + 1 RETURNING id, store_id",
                                          our_blob, total, pg::bytes(sha_raw), pg::bytes{md5_raw});
                    blob_row = b[0].i64(0);
                    blob_store_id = b[0].str(1);
                }
                if (auto current = co_await lock_current(c, v.bucket_id, v.key)) {
                    auto released = co_await release_version(c, *current);
                    unreferenced.insert(unreferenced.end(), released.begin(), released.end());
                }
                auto [row, modified] = co_await insert_version(c, v);
                if (blob_row)
                    co_await sql(
                        c,
                        "INSERT INTO object_segments (version_row, ordinal, blob_id, blob_offset, length) "
                        "VALUES ($1, 0, $2, 0, $3)",
                        row, *blob_row, total);
                if (!our_blob.empty() && blob_store_id != our_blob)
                    unreferenced.push_back(our_blob);
                object_version out = v;
                out.row_id = row;
                out.last_modified = from_millis(modified);
                co_return out;
            });
        if (!published && !our_blob.empty())
            unreferenced.push_back(our_blob);
        co_await remove_blobs(std::move(unreferenced));
        co_return published;
    } catch (...) {
        crash = std::current_exception();
    }
    // The transaction did not commit: our blob is referenced by nothing.
    if (!our_blob.empty())
        co_await remove_blobs(std::vector<std::string>(1, our_blob));
    std::rethrow_exception(crash);
}

asio::awaitable<result<object_handle>> object_service::open_object(std::int64_t bucket_id,
                                                                   std::string_view key)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn,
                           std::string("SELECT ") + version_columns +
                               " FROM object_versions o JOIN users u ON u.id = o.owner_id "
                               "WHERE o.bucket_id = $1 AND o.key = $2 AND o.superseded_seq IS NULL",
                           bucket_id, key);
    if (rs.empty() || rs[0].boolean(4))
        co_return make_error(errc::no_such_key, "The specified key does not exist.");
    co_return handle_from(rs[0]);
}

asio::awaitable<result<object_version>> object_service::copy_object(copy_object_request req)
{
    std::vector<std::string> unreferenced;
    auto copied = co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<object_version>> {
        unreferenced.clear();
        if (!co_await lock_bucket(c, req.target->id))
            co_return make_error(errc::no_such_bucket, "The specified bucket does not exist");
        auto src = co_await sql(c,
                                std::string("SELECT ") + version_columns +
                                    " FROM object_versions o JOIN users u ON u.id = o.owner_id "
                                    "WHERE o.id = $1 AND o.superseded_seq IS NULL AND NOT o.is_delete_marker "
                                    "FOR SHARE OF o",
                                req.expected_source_row);
        if (src.empty())
            co_return make_error(errc::no_such_key, "The specified key does not exist.");
        auto source = handle_from(src[0]);
        // Take the new references before releasing the replaced version: copying a key onto itself must
        // not drop its blobs to zero in between.
        co_await sql(c,
                     "WITH seg AS (SELECT blob_id, count(*) AS n FROM object_segments WHERE version_row = $1 "
                     "GROUP BY blob_id) "
                     "UPDATE blobs b SET refcount = b.refcount + seg.n FROM seg WHERE b.id = seg.blob_id",
                     source.version.row_id);
        if (auto current = co_await lock_current(c, req.target->id, req.key))
            unreferenced = co_await release_version(c, *current);
        object_version v = source.version;
        v.bucket_id = req.target->id;
        v.key = req.key;
        v.version_id = "null";
        v.owner_id = req.owner_id;
        if (req.replace_headers)
            v.headers = std::move(*req.replace_headers);
        auto [row, modified] = co_await insert_version(c, v);
        co_await sql(c,
                     "INSERT INTO object_segments (version_row, ordinal, blob_id, blob_offset, length) "
                     "SELECT $1, ordinal, blob_id, blob_offset, length FROM object_segments "
                     "WHERE version_row = $2",
                     row, source.version.row_id);
        v.row_id = row;
        v.last_modified = from_millis(modified);
        co_return v;
    });
    co_await remove_blobs(std::move(unreferenced));
    co_return copied;
}

asio::awaitable<result<void>> object_service::delete_object(std::int64_t bucket_id, std::string_view key)
{
    std::vector<std::string> unreferenced;
    auto deleted = co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
        unreferenced.clear();
        if (auto current = co_await lock_current(c, bucket_id, key))
            unreferenced = co_await release_version(c, *current);
        co_return ok();
    });
    co_await remove_blobs(std::move(unreferenced));
    co_return deleted;
}

asio::awaitable<void> object_service::remove_blobs(std::vector<std::string> store_ids)
{
    for (const auto& id : store_ids) {
        auto removed = co_await store_.remove(id);
        if (!removed && removed.error().code != errc::not_found)
            log::warn("blob removal failed; the collector will retry",
                      {{"blob", id}, {"error", removed.error().message}});
    }
}

} // namespace depot::registry
