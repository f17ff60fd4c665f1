#include "registry/service/object_service.hpp"

#include "common/hash.hpp"
#include "common/json.hpp"
#include "common/log.hpp"
#include "registry/repo/audit.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/repo/versions.hpp"
#include "registry/service/content.hpp"
#include "registry/service/object_copy.hpp"
#include "registry/service/sse.hpp"
#include "registry/transaction.hpp"

#include <exception>

namespace depot::registry {
namespace {

/// Columns of a version row followed by its segments as JSON, in the order `version_from` reads them.
constexpr const char* version_columns =
    "o.id, o.bucket_id, o.key, o.version_id, o.is_delete_marker, o.size, o.etag, o.sha256, o.owner_id, "
    "u.display_name, " DEPOT_MS(
        "o.last_modified") ", o.content_type, o.content_encoding, "
                           "o.content_disposition, o.content_language, o.cache_control, o.expires, "
                           "o.user_metadata::text, "
                           "o.parts_count, "
                           "(SELECT coalesce(json_agg(json_build_array(s.blob_id, b.store_id, s.blob_offset, "
                           "s.length, "
                           "coalesce(s.part_number, 0), coalesce(b.sealed, '')) ORDER BY s.ordinal), '[]') "
                           "FROM object_segments s JOIN blobs b ON b.id = s.blob_id WHERE s.version_row = "
                           "o.id)::text, "
                           "coalesce(o.checksum_algorithm, ''), coalesce(o.checksum_type, ''), "
                           "coalesce(o.checksum_value, ''), o.tags::text, coalesce(o.lock_mode, ''), "
                           "coalesce(" DEPOT_MS(
                               "o.lock_until") ", 0), o.legal_hold, coalesce(o.sse, ''), o.sse_key_check";

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
    v.checksum_algorithm = r.str(20);
    v.checksum_type = r.str(21);
    v.checksum_value = r.str(22);
    v.tags = tags_from_json(r.text(23));
    if (auto mode = s3::parse_retention_mode(r.text(24)))
        v.retention = s3::retention{.mode = *mode, .retain_until = from_millis(r.i64(25))};
    v.legal_hold = r.opt_boolean(26);
    v.sse = r.str(27);
    v.sse_key_check = r.is_null(28) ? std::string() : r.bytea(28);
    // [[blob_row, store_id, offset, length, part_number, sealing], ...] (json_agg of the version's segments;
    // read on every GET: Boost.JSON's parser is why this is cheap). Throws on a malformed column.
    const auto segments = boost::json::parse(r.text(19));
    for (const auto& value : segments.as_array()) {
        const auto& s = value.as_array();
        h.segments.push_back(segment{.blob_row = s.at(0).to_number<std::int64_t>(),
                                     .store_id = std::string(s.at(1).as_string()),
                                     .offset = s.at(2).to_number<std::uint64_t>(),
                                     .length = s.at(3).to_number<std::uint64_t>(),
                                     .part_number = s.at(4).to_number<int>(),
                                     .sealed = sealing_from_column(s.at(5).as_string())});
    }
    return h;
}

} // namespace

asio::awaitable<result<object_version>> object_service::put_object(const audit_context& who,
                                                                   put_object_request req)
{
    // Data first: a verified, committed blob that nothing references yet.
    ingest_limits limits{.content_length = req.content_length,
                         .max_size = req.max_size,
                         .expected_md5 = std::move(req.expected_md5),
                         .expected_sha256 = std::move(req.expected_sha256),
                         .checksum = req.checksum,
                         .checksum_value = req.checksum_value,
                         .trailer_checksum = req.trailer_checksum,
                         .dedup = req.target->dedup,
                         .sealed = req.sse.mode};
    auto view =
        sealed_view(store_, req.sse.mode, {.master = sse_master_key_, .customer = req.sse.customer_key});
    if (!view)
        co_return std::move(view).error();
    auto in = co_await ingest(**view, pool_, *req.body, limits);
    if (!in)
        co_return std::move(in).error();

    object_version v;
    v.bucket_id = req.target->id;
    v.key = req.key;
    v.version_id = "null";
    v.size = in->size;
    v.etag = sse_etag(req.sse.mode, req.sse.customer_key, in->md5);
    v.sha256 = in->sha256;
    v.checksum_algorithm = std::string(to_string(in->algorithm));
    v.checksum_type = "FULL_OBJECT";
    v.checksum_value = encode_checksum(in->checksum);
    v.owner_id = req.owner_id;
    v.headers = std::move(req.headers);
    v.tags = std::move(req.tags);
    v.retention = req.retention;
    v.legal_hold = req.legal_hold;
    v.sse = sse_name(req.sse.mode);
    if (req.sse.mode == sealing::customer)
        v.sse_key_check = make_key_check(req.sse.customer_key);
    std::vector<std::string> unreferenced;

    // Metadata last: one transaction publishes the object.
    std::exception_ptr crash;
    try {
        auto published =
            co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<object_version>> {
                unreferenced.clear();
                // One round trip (with the deferred BEGIN): the bucket's write lock and versioning mode, a
                // reference on each blob, the key's current version locked; in the order they always ran.
                std::vector<pg::statement> start;
                start.push_back(lock_bucket_versioning_statement(v.bucket_id));
                for (auto& st : publish_statements(*in))
                    start.push_back(std::move(st));
                start.push_back(lock_current_statement(v.bucket_id, v.key));
                auto results = co_await c.query_all(std::move(start));
                auto mode = locked_versioning(results.front());
                if (!mode)
                    co_return make_error(errc::no_such_bucket, "The specified bucket does not exist");
                auto segments = published_segments(
                    *in, std::span<const pg::result_set>(results).subspan(1, results.size() - 2),
                    unreferenced);
                if (!segments)
                    co_return std::move(segments).error();
                std::optional<current_version> current;
                if (auto found = locked_current(results.back()))
                    current = std::move(*found);
                else // replaced while the statement waited for its lock: look again
                    current = co_await lock_current(c, v.bucket_id, v.key);
                if (auto met = check_write_conditions(req.if_match, req.if_none_match, current); !met)
                    co_return std::move(met).error();
                auto slot = co_await retire_current(c, *mode, v.bucket_id, v.key, current, unreferenced);
                v.version_id = slot.version_id;
                const std::string audit = "{\"version_id\":" + audit_quote(v.version_id) +
                                          ",\"size\":" + std::to_string(v.size) +
                                          ",\"etag\":" + audit_quote(v.etag) + req.audit_extra + "}";
                object_version out = v;
                if (locked_object_events(results.front())) {
                    auto [row, modified] = co_await insert_version(c, v, slot.seq); // emits the event
                    co_await insert_segments(c, row, *segments);
                    co_await append_object_audit(c, who, req.audit_action, v.bucket_id, v.key, audit);
                    out.row_id = row;
                    out.last_modified = from_millis(modified);
                    co_return out;
                }
                // No event to emit: the version, its manifest, the audit row and COMMIT in one round trip.
                co_await append_object_audit(c, who, req.audit_action, v.bucket_id, v.key, audit);
                std::vector<pg::statement> finish;
                finish.push_back(insert_version_statement(v, slot.seq, *segments));
                finish.push_back(pg::statement{"COMMIT", {}});
                auto done = co_await c.query_all(std::move(finish));
                out.row_id = done[0][0].i64(0);
                out.last_modified = from_millis(done[0][0].i64(1));
                co_return out;
            });
        // Rolled back: only the new blobs are garbage (what the attempt released is still referenced).
        if (!published)
            co_await discard_ingested(store_, pool_, *in);
        else
            co_await remove_blobs(store_, std::move(unreferenced));
        co_return published;
    } catch (...) {
        crash = std::current_exception();
    }
    // Rolled back, or (a lost connection while COMMIT was on its way) perhaps committed after all.
    co_await discard_new_blobs(store_, pool_, *in, crash);
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

asio::awaitable<result<object_handle>>
object_service::open_version(std::int64_t bucket_id, std::string_view key,
                             const std::optional<std::string>& version_id)
{
    auto conn = co_await pool_.acquire();
    const std::string select = std::string("SELECT ") + version_columns +
                               " FROM object_versions o JOIN users u ON u.id = o.owner_id "
                               "WHERE o.bucket_id = $1 AND o.key = $2 AND ";
    if (!version_id) {
        auto rs = co_await sql(*conn, select + "o.superseded_seq IS NULL", bucket_id, key);
        if (rs.empty())
            co_return make_error(errc::no_such_key, "The specified key does not exist.");
        co_return handle_from(rs[0]);
    }
    // Purged rows only snapshots see; a reinstated version keeps its id but not its created_seq.
    auto rs = co_await sql(*conn, select + "o.version_id = $3 AND NOT o.purged", bucket_id, key, *version_id);
    if (rs.empty())
        co_return make_error(errc::no_such_version, "The specified version does not exist.");
    co_return handle_from(rs[0]);
}

asio::awaitable<result<object_handle>> object_service::open_as_of(std::int64_t bucket_id,
                                                                  std::string_view key, std::int64_t as_of)
{
    auto conn = co_await pool_.acquire();
    auto rs =
        co_await sql(*conn,
                     std::string("SELECT ") + version_columns +
                         " FROM object_versions o JOIN users u ON u.id = o.owner_id "
                         "WHERE o.bucket_id = $1 AND o.key = $2 AND o.created_seq <= $3 AND "
                         "(o.superseded_seq IS NULL OR o.superseded_seq > $3) AND NOT o.is_delete_marker",
                     bucket_id, key, as_of);
    if (rs.empty())
        co_return make_error(errc::no_such_key, "The specified key does not exist.");
    co_return handle_from(rs[0]);
}

asio::awaitable<std::vector<object_part_info>> object_service::parts(std::int64_t version_row)
{
    auto conn = co_await pool_.acquire();
    auto rs =
        co_await sql(*conn,
                     "SELECT part_number, offset_in_object, size, coalesce(checksum, '') FROM object_parts "
                     "WHERE version_row = $1 ORDER BY part_number",
                     version_row);
    std::vector<object_part_info> out;
    for (auto r : rs)
        out.push_back(object_part_info{.part_number = static_cast<int>(r.i64(0)),
                                       .offset = static_cast<std::uint64_t>(r.i64(1)),
                                       .size = static_cast<std::uint64_t>(r.i64(2)),
                                       .checksum = r.str(3)});
    co_return out;
}

asio::awaitable<result<object_version>> copy_version_in(pg::connection& c, versioning_mode mode,
                                                        const copy_object_request& req,
                                                        std::vector<std::string>& unreferenced)
{
    auto src = co_await sql(c,
                            std::string("SELECT ") + version_columns +
                                " FROM object_versions o JOIN users u ON u.id = o.owner_id "
                                "WHERE o.id = $1 AND ($2 OR o.superseded_seq IS NULL) AND NOT "
                                "o.is_delete_marker FOR SHARE OF o",
                            req.expected_source_row, req.source_version_pinned);
    if (src.empty())
        co_return make_error(errc::no_such_key, "The specified key does not exist.");
    auto source = handle_from(src[0]);
    // Take the new references before releasing the replaced version: copying a key onto itself must not
    // drop its blobs to zero in between.
    std::vector<std::int64_t> blobs;
    for (const auto& seg : source.segments)
        blobs.push_back(seg.blob_row);
    co_await add_references(c, blobs);
    auto current = co_await lock_current(c, req.target->id, req.key);
    auto slot = co_await retire_current(c, mode, req.target->id, req.key, current, unreferenced);
    object_version v = source.version;
    v.bucket_id = req.target->id;
    v.key = req.key;
    v.version_id = slot.version_id;
    v.owner_id = req.owner_id;
    if (req.replace_headers)
        v.headers = *req.replace_headers;
    if (req.replace_tags)
        v.tags = *req.replace_tags;
    v.retention = req.retention;
    v.legal_hold = req.legal_hold;
    auto [row, modified] = co_await insert_version(c, v, slot.seq);
    // From the manifest read above: copying a key onto itself has just deleted the source row.
    co_await insert_segments(c, row, source.segments);
    v.row_id = row;
    v.last_modified = from_millis(modified);
    co_return v;
}

asio::awaitable<result<object_version>> object_service::copy_object(const audit_context& who,
                                                                    copy_object_request req)
{
    std::vector<std::string> unreferenced;
    auto copied = co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<object_version>> {
        unreferenced.clear();
        auto mode = co_await lock_bucket_versioning(c, req.target->id);
        if (!mode)
            co_return make_error(errc::no_such_bucket, "The specified bucket does not exist");
        auto copied = co_await copy_version_in(c, *mode, req, unreferenced);
        if (copied)
            co_await append_object_audit(
                c, who, "object.copy", req.target->id, req.key,
                "{\"source\":" + audit_quote(req.source_bucket->name + "/" + req.source_key) +
                    ",\"version_id\":" + audit_quote(copied->version_id) + "}");
        co_return copied;
    });
    // Rolled back: nothing was released.
    if (!copied)
        unreferenced.clear();
    co_await remove_blobs(store_, std::move(unreferenced));
    co_return copied;
}

asio::awaitable<result<void>> object_service::delete_object(const audit_context& who, std::int64_t bucket_id,
                                                            std::string_view key)
{
    delete_request request{.bucket_id = bucket_id, .key = std::string(key), .version_id = std::nullopt};
    auto deleted = co_await remove(who, std::move(request));
    if (!deleted)
        co_return std::move(deleted).error();
    co_return ok();
}

} // namespace depot::registry
