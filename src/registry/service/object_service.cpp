#include "registry/service/object_service.hpp"

#include "common/hash.hpp"
#include "common/log.hpp"
#include "registry/repo/audit.hpp"
#include "registry/repo/object_acls.hpp"
#include "registry/repo/objects.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/repo/versions.hpp"
#include "registry/service/content.hpp"
#include "registry/service/object_copy.hpp"
#include "registry/service/sse.hpp"
#include "registry/transaction.hpp"

#include <exception>

namespace depot::registry {

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
                const std::string audit =
                    "{\"version_id\":" + audit_quote(v.version_id) + ",\"size\":" + std::to_string(v.size) +
                    ",\"etag\":" + audit_quote(v.etag) + req.audit_extra +
                    (req.acl.empty() ? std::string() : ",\"acl\":" + audit_quote(req.acl)) + "}";
                object_version out = v;
                if (locked_object_events(results.front()) || !req.acl.empty()) {
                    auto [row, modified] = co_await insert_version(c, v, slot.seq); // emits the event
                    co_await insert_segments(c, row, *segments);
                    if (!req.acl.empty()) // the write's ACL, in the write's transaction
                        co_await insert_version_acl(c, row, req.acl);
                    co_await append_object_audit(c, who, req.audit_action, v.bucket_id, v.key, audit);
                    out.row_id = row;
                    out.last_modified = from_millis(modified);
                    co_return out;
                }
                // No event to emit, no ACL: the version, its manifest, the audit row and COMMIT in one round
                // trip.
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
    auto found = co_await current_object_version(*conn, bucket_id, key);
    if (!found || found->version.is_delete_marker)
        co_return make_error(errc::no_such_key, "The specified key does not exist.");
    co_return std::move(*found);
}

asio::awaitable<result<object_handle>>
object_service::open_version(std::int64_t bucket_id, std::string_view key,
                             const std::optional<std::string>& version_id)
{
    auto conn = co_await pool_.acquire();
    if (!version_id) {
        auto found = co_await current_object_version(*conn, bucket_id, key);
        if (!found)
            co_return make_error(errc::no_such_key, "The specified key does not exist.");
        co_return std::move(*found);
    }
    // Purged rows only snapshots see; a reinstated version keeps its id but not its created_seq.
    auto found = co_await object_version_by_id(*conn, bucket_id, key, *version_id);
    if (!found)
        co_return make_error(errc::no_such_version, "The specified version does not exist.");
    co_return std::move(*found);
}

asio::awaitable<result<object_handle>> object_service::open_as_of(std::int64_t bucket_id,
                                                                  std::string_view key, std::int64_t as_of)
{
    auto conn = co_await pool_.acquire();
    auto found = co_await object_version_as_of(*conn, bucket_id, key, as_of);
    if (!found)
        co_return make_error(errc::no_such_key, "The specified key does not exist.");
    co_return std::move(*found);
}

asio::awaitable<std::vector<object_part_info>> object_service::parts(std::int64_t version_row)
{
    auto conn = co_await pool_.acquire();
    co_return co_await object_parts_of(*conn, version_row);
}

asio::awaitable<result<object_version>> copy_version_in(pg::connection& c, versioning_mode mode,
                                                        const copy_object_request& req,
                                                        std::vector<std::string>& unreferenced)
{
    const std::int64_t source_row = req.expected_source_row;
    const bool pinned = req.source_version_pinned;
    auto src = co_await share_copy_source(c, source_row, pinned);
    if (!src)
        co_return make_error(errc::no_such_key, "The specified key does not exist.");
    auto& source = *src;
    // Take the new references before releasing the replaced version: copying a key onto itself must not
    // drop its blobs to zero in between.
    std::vector<std::int64_t> blobs;
    for (const auto& seg : source.segments)
        blobs.push_back(seg.blob_row);
    co_await add_references(c, blobs);
    auto current = co_await lock_current(c, req.target->id, req.key);
    if (auto met = check_write_conditions(req.if_match, req.if_none_match, current); !met)
        co_return std::move(met).error();
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
        if (copied && !req.acl.empty()) // the copy's ACL, in the copy's transaction
            co_await insert_version_acl(c, copied->row_id, req.acl);
        if (copied) {
            // A named value, not a temporary in the co_await's arguments: GCC 12 destroys those twice.
            const std::string details =
                "{\"source\":" + audit_quote(req.source_bucket->name + "/" + req.source_key) +
                ",\"version_id\":" + audit_quote(copied->version_id) +
                (req.acl.empty() ? std::string() : ",\"acl\":" + audit_quote(req.acl)) + "}";
            co_await append_object_audit(c, who, "object.copy", req.target->id, req.key, details);
        }
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
