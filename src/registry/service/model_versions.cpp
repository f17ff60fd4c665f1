// model_registry: versions - freezing a prefix into a numbered version, and reading it back (files,
// diff, open_file).
#include "common/hash.hpp"
#include "registry/repo/events.hpp"
#include "registry/repo/model_detail.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/repo/versions.hpp"
#include "registry/service/content.hpp"
#include "registry/service/model_registry.hpp"
#include "registry/service/sse.hpp"
#include "registry/transaction.hpp"
#include "s3/listing.hpp"
#include "s3/names.hpp"

#include <algorithm>

namespace depot::registry {
using namespace model_detail;

namespace {

/// path, size, sha256, etag, content_type starting at column `col`.
model_file file_of(const pg::row& r, int col = 0)
{
    return model_file{.path = r.str(col),
                      .size = static_cast<std::uint64_t>(r.i64(col + 1)),
                      .sha256 = r.opt_bytea(col + 2).value_or(""),
                      .etag = r.str(col + 3),
                      .content_type = r.opt_str(col + 4)};
}

/// The segments of one file of a version ($1 version id, $2 path), in order, for segments_of.
constexpr const char* file_segments_sql =
    "SELECT s.blob_id, b.store_id, s.blob_offset, s.length, coalesce(b.sealed, '') FROM model_file_segments "
    "s "
    "JOIN blobs b ON b.id = s.blob_id WHERE s.version_id = $1 AND s.path = $2 ORDER BY s.ordinal";

bool all_digits(std::string_view s)
{
    return !s.empty() && s.size() <= 9 &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// Streams segments through SHA-256, read as objects are (sealed blobs decrypted: the digest is of the
/// plaintext).
asio::awaitable<result<std::string>> hash_segments(object_service& objects, std::vector<segment> segments)
{
    hasher h(digest_kind::sha256);
    std::vector<std::byte> buf(1 << 20);
    object_handle handle;
    std::uint64_t left = 0;
    for (const auto& s : segments)
        left += s.length;
    handle.segments = std::move(segments);
    auto source = objects.read(handle, 0, left);
    while (left > 0) {
        const std::span<std::byte> window(buf.data(), std::min<std::uint64_t>(buf.size(), left));
        auto n = co_await source->read_some(window);
        if (!n)
            co_return std::move(n).error();
        if (*n == 0)
            co_return make_error(errc::io_error, "blob is shorter than the manifest says");
        h.update(std::span<const std::byte>(buf.data(), *n));
        left -= *n;
    }
    co_return h.finish();
}

std::vector<segment> segments_of(const pg::result_set& rs)
{
    std::vector<segment> out;
    for (auto r : rs)
        out.push_back(segment{.blob_row = r.i64(0),
                              .store_id = r.str(1),
                              .offset = static_cast<std::uint64_t>(r.i64(2)),
                              .length = static_cast<std::uint64_t>(r.i64(3)),
                              .sealed = sealing_from_column(r.str(4))});
    return out;
}

} // namespace

// --- versions --------------------------------------------------------------------------------------------

asio::awaitable<result<void>> model_registry::hash_unknown_digests(const model& m)
{
    const std::string upper = m.prefix.empty() ? std::string() : s3::prefix_successor(m.prefix);
    auto conn = co_await pool_.acquire();
    auto rows = co_await sql(*conn,
                             "SELECT id FROM object_versions WHERE bucket_id = $1 AND key >= $2 AND "
                             "($3 = '' OR key < $3) AND superseded_seq IS NULL AND NOT is_delete_marker "
                             "AND sha256 IS NULL ORDER BY key",
                             m.bucket_id, m.prefix, upper);
    for (auto row : rows) {
        const auto id = row.i64(0);
        auto segs =
            co_await sql(*conn,
                         "SELECT s.blob_id, b.store_id, s.blob_offset, s.length, coalesce(b.sealed, '') "
                         "FROM object_segments s "
                         "JOIN blobs b ON b.id = s.blob_id WHERE s.version_row = $1 ORDER BY s.ordinal",
                         id);
        auto digest = co_await hash_segments(objects_, segments_of(segs));
        if (!digest) {
            // Deleted meanwhile: the version will not contain it (or hash_version_files catches up).
            if (digest.error().code == errc::not_found)
                continue;
            co_return std::move(digest).error();
        }
        const pg::bytes raw(*digest);
        co_await sql(*conn, "UPDATE object_versions SET sha256 = $2 WHERE id = $1 AND sha256 IS NULL", id,
                     raw);
    }
    co_return ok();
}

asio::awaitable<result<void>> model_registry::hash_version_files(std::int64_t version_id)
{
    auto conn = co_await pool_.acquire();
    auto rows = co_await sql(*conn, "SELECT path FROM model_files WHERE version_id = $1 AND sha256 IS NULL",
                             version_id);
    for (auto row : rows) {
        const auto path = row.str(0);
        auto segs = co_await sql(*conn, file_segments_sql, version_id, path);
        auto digest = co_await hash_segments(objects_, segments_of(segs));
        if (!digest)
            co_return std::move(digest).error();
        const pg::bytes raw(*digest);
        co_await sql(*conn, "UPDATE model_files SET sha256 = $3 WHERE version_id = $1 AND path = $2",
                     version_id, path, raw);
    }
    co_return ok();
}

asio::awaitable<result<model_version>> model_registry::create_version(const model& m, version_spec spec,
                                                                      const audit_context& who)
{
    if (auto hashed = co_await hash_unknown_digests(m); !hashed)
        co_return std::move(hashed).error();
    const std::string upper = m.prefix.empty() ? std::string() : s3::prefix_successor(m.prefix);
    std::vector<std::string> unreferenced; // blobs completed uploads released, removed after the commit
    auto work = [&](pg::connection& c) -> asio::awaitable<result<std::int64_t>> {
        co_await events::lock_model(c, m.id);
        auto locked = co_await sql(c, "SELECT next_version FROM models WHERE id = $1 FOR UPDATE", m.id);
        if (locked.empty())
            co_return make_error(errc::not_found, "No such model");
        const auto number = locked[0].i64(0);
        if (spec.label) {
            auto taken =
                co_await sql(c,
                             "SELECT 1 FROM model_versions WHERE model_id = $1 AND label = $2 UNION ALL "
                             "SELECT 1 FROM model_aliases WHERE model_id = $1 AND name = $2",
                             m.id, *spec.label);
            if (!taken.empty())
                co_return make_error(errc::conflict,
                                     "The label '" + *spec.label +
                                         "' already names a version or an alias of this model");
        }
        if (spec.parent && (*spec.parent < 1 || *spec.parent >= number))
            co_return make_error(errc::invalid_argument, "The parent version does not exist", "parent");
        // Writers hold the bucket's write lock shared while they publish: taking it exclusively waits for
        // those in flight and queues new ones until the commit, so the files are the prefix at one moment
        // (and, unlike a row lock, a steady stream of writers cannot starve the version).
        if (!co_await lock_bucket_writes(c, m.bucket_id))
            co_return make_error(errc::no_such_bucket, "The model's bucket no longer exists");
        auto inserted =
            co_await sql(c,
                         "INSERT INTO model_versions (model_id, number, label, description, framework, "
                         "format, parent, run_url, labels, metrics, created_by) VALUES ($1, $2, $3, "
                         "$4, $5, $6, $7, $8, $9::jsonb, $10::jsonb, $11) RETURNING id",
                         m.id, number, spec.label, spec.description, spec.framework, spec.format, spec.parent,
                         spec.run_url, spec.labels_json, spec.metrics_json, who.actor);
        const auto vid = inserted[0].i64(0);
        // The uploads are completed into the prefix in the version's transaction: all of them and the
        // version, or nothing. (A retried transaction starts over.)
        unreferenced.clear();
        const write_preconditions unconditional;
        for (const auto& u : spec.uploads) {
            auto done = co_await multipart_.complete_in(c, u.upload, u.parts, unconditional, unreferenced);
            if (!done)
                co_return make_error(done.error().code, "Upload of '" + u.path + "': " + done.error().message,
                                     "uploads");
        }
        // The object rows visible now (or at the snapshot's sequence number $5). Directory markers (the
        // prefix itself, empty keys ending in '/') are not files.
        const std::string visible =
            std::string(
                "FROM object_versions o WHERE o.bucket_id = $2 AND o.key > $3 AND ($4 = '' OR o.key < "
                "$4) AND NOT o.is_delete_marker AND NOT (o.size = 0 AND o.key LIKE '%/') AND ") +
            (spec.as_of_seq ? "o.created_seq <= $5 AND (o.superseded_seq IS NULL OR o.superseded_seq > $5) "
                            : "o.superseded_seq IS NULL ");
        const std::string files_sql = "INSERT INTO model_files (version_id, path, size, sha256, etag, "
                                      "content_type) SELECT $1, substr(o.key, char_length($3) + 1), o.size, "
                                      "o.sha256, o.etag, o.content_type " +
                                      visible;
        const std::string segments_sql =
            "INSERT INTO model_file_segments (version_id, path, ordinal, blob_id, blob_offset, length) "
            "SELECT "
            "$1, substr(o.key, char_length($3) + 1), s.ordinal, s.blob_id, s.blob_offset, s.length FROM "
            "object_segments s JOIN (SELECT o.id, o.key " +
            visible + ") o ON o.id = s.version_row";
        if (spec.as_of_seq) {
            co_await sql(c, files_sql, vid, m.bucket_id, m.prefix, upper, *spec.as_of_seq);
            co_await sql(c, segments_sql, vid, m.bucket_id, m.prefix, upper, *spec.as_of_seq);
        } else {
            co_await sql(c, files_sql, vid, m.bucket_id, m.prefix, upper);
            co_await sql(c, segments_sql, vid, m.bucket_id, m.prefix, upper);
        }
        co_await sql(
            c,
            "UPDATE blobs b SET refcount = b.refcount + n.k FROM (SELECT blob_id, count(*) AS k FROM "
            "model_file_segments WHERE version_id = $1 GROUP BY blob_id) n WHERE b.id = n.blob_id",
            vid);
        co_await sql(
            c,
            "UPDATE model_versions SET (file_count, total_bytes) = (SELECT count(*), coalesce(sum(size), "
            "0) FROM model_files WHERE version_id = $1) WHERE id = $1",
            vid);
        co_await sql(c, "UPDATE models SET next_version = next_version + 1 WHERE id = $1", m.id);
        co_await record(c, m.id, vid, "created", who, spec.description, std::nullopt, "draft");
        co_await emit_version_event(c, m, "version.created", vid, static_cast<int>(number), spec.label,
                                    "draft", who, spec.description);
        if (!m.policy.protects("latest"))
            co_await move_alias(c, m, "latest", vid, static_cast<int>(number), who);
        co_return vid;
    };
    auto created = co_await transact(pool_, work);
    if (!created)
        co_return std::move(created).error();
    co_await multipart_.release(std::move(unreferenced));
    if (auto hashed = co_await hash_version_files(*created); !hashed)
        co_return std::move(hashed).error();
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn, std::string(version_select) + "WHERE v.id = $1", *created);
    co_return version_of(rs[0]);
}

asio::awaitable<std::vector<model_version>> model_registry::versions(std::int64_t model_id, int before,
                                                                     std::size_t limit)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(
        *conn,
        std::string(version_select) +
            "WHERE v.model_id = $1 AND ($2 = 0 OR v.number < $2) ORDER BY v.number DESC LIMIT $3",
        model_id, before, static_cast<std::int64_t>(limit));
    std::vector<model_version> out;
    for (auto r : rs)
        out.push_back(version_of(r));
    co_return out;
}

asio::awaitable<result<model_version>> model_registry::get_version(const model& m, std::string_view ref,
                                                                   bool aliases)
{
    auto conn = co_await pool_.acquire();
    pg::result_set rs;
    if (all_digits(ref)) {
        rs = co_await sql(*conn, std::string(version_select) + "WHERE v.model_id = $1 AND v.number = $2",
                          m.id, static_cast<std::int64_t>(std::stoll(std::string(ref))));
    } else {
        rs = co_await sql(*conn, std::string(version_select) + "WHERE v.model_id = $1 AND v.label = $2", m.id,
                          ref);
        if (rs.empty() && aliases)
            rs = co_await sql(*conn,
                              std::string(version_select) +
                                  "JOIN model_aliases al ON al.version_id = v.id WHERE al.model_id = $1 AND "
                                  "al.name = $2 AND v.state <> 'archived'",
                              m.id, ref);
    }
    if (rs.empty())
        co_return make_error(errc::not_found, "No such version");
    co_return version_of(rs[0]);
}

asio::awaitable<std::vector<model_file>>
model_registry::files(std::int64_t version_id, std::string_view after, std::size_t limit, bool inclusive)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn,
                           std::string("SELECT path, size, sha256, etag, content_type FROM model_files WHERE "
                                       "version_id = $1 AND ") +
                               (inclusive ? "path >= $2" : "path > $2") + " ORDER BY path LIMIT $3",
                           version_id, after, static_cast<std::int64_t>(limit));
    std::vector<model_file> out;
    for (auto r : rs)
        out.push_back(file_of(r));
    co_return out;
}

asio::awaitable<file_diff> model_registry::diff(std::int64_t from_version, std::int64_t to_version)
{
    auto conn = co_await pool_.acquire();
    auto rs =
        co_await sql(*conn,
                     "SELECT a.path, a.size, a.sha256, a.etag, a.content_type, b.path, b.size, b.sha256, "
                     "b.etag, b.content_type FROM (SELECT * FROM model_files WHERE version_id = $1) a "
                     "FULL JOIN (SELECT * FROM model_files WHERE version_id = $2) b ON a.path = b.path "
                     "WHERE a.path IS NULL OR b.path IS NULL OR a.sha256 IS DISTINCT FROM b.sha256 OR "
                     "a.size <> b.size ORDER BY coalesce(a.path, b.path)",
                     from_version, to_version);
    file_diff out;
    for (auto r : rs) {
        if (r.is_null(0))
            out.added.push_back(file_of(r, 5));
        else if (r.is_null(5))
            out.removed.push_back(file_of(r, 0));
        else
            out.changed.emplace_back(file_of(r, 0), file_of(r, 5));
    }
    co_return out;
}

asio::awaitable<result<object_handle>> model_registry::open_file(const model_version& v,
                                                                 std::string_view path)
{
    auto conn = co_await pool_.acquire();
    auto rs =
        co_await sql(*conn,
                     "SELECT path, size, sha256, etag, content_type FROM model_files WHERE version_id = $1 "
                     "AND path = $2",
                     v.id, path);
    if (rs.empty())
        co_return make_error(errc::no_such_key, "The specified key does not exist.");
    auto f = file_of(rs[0]);
    auto segs = co_await sql(*conn, file_segments_sql, v.id, path);
    object_handle h;
    h.segments = segments_of(segs);
    h.version.key = f.path;
    h.version.version_id = "null";
    h.version.size = f.size;
    h.version.etag = f.etag;
    h.version.sha256 = f.sha256;
    h.version.owner_id = v.created_by;
    h.version.owner_display_name = v.created_by;
    h.version.last_modified = v.created_at;
    h.version.headers.content_type = f.content_type;
    co_return h;
}

} // namespace depot::registry
