#include "registry/service/multipart_service.hpp"

#include "common/hash.hpp"
#include "registry/repo/audit.hpp"
#include "registry/repo/bucket_names.hpp"
#include "registry/repo/multipart_uploads.hpp"
#include "registry/repo/object_acls.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/repo/versions.hpp"
#include "registry/transaction.hpp"
#include "s3/etag.hpp"
#include "s3/names.hpp"

namespace depot::registry {
namespace {

error no_such_upload()
{
    return make_error(
        errc::no_such_upload,
        "The specified upload does not exist. The upload ID may be invalid, or the upload may have been "
        "aborted or completed.");
}

error copy_source_gone()
{
    return make_error(errc::no_such_key, "The specified key does not exist.");
}

/// Deletes one part (its segments cascade) and drops their references.
asio::awaitable<void> release_part(pg::connection& c, std::int64_t upload_row, int part_number,
                                   std::vector<std::string>& unreferenced)
{
    auto blobs = co_await delete_part(c, upload_row, part_number);
    co_await drop_references(c, blobs, unreferenced);
}

} // namespace

asio::awaitable<result<multipart_upload>> multipart_service::create(
    const audit_context& who, const bucket& target, std::string key, std::string owner_id,
    object_headers headers, std::optional<checksum_algorithm> algorithm, std::optional<checksum_type> type,
    std::vector<s3::tag> tags, const s3::requested_lock& lock, const sse_spec& sse, const std::string& acl)
{
    if (type && !algorithm)
        co_return make_error(
            errc::invalid_request,
            "The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.");
    std::string algorithm_name, type_name;
    if (algorithm) {
        auto t = type.value_or(default_multipart_checksum_type(*algorithm));
        if (!multipart_supports(*algorithm, t))
            co_return make_error(errc::invalid_request, "The " + std::string(to_string(t)) +
                                                            " checksum type is not supported for " +
                                                            std::string(to_string(*algorithm)) + ".");
        algorithm_name = std::string(to_string(*algorithm));
        type_name = std::string(to_string(t));
    }
    const upload_insert row{
        .upload_id = to_hex(random_bytes(24)),
        .bucket_id = target.id,
        .key = key,
        .owner_id = owner_id,
        .headers = headers,
        .metadata_json = metadata_json(headers),
        .checksum_algorithm = algorithm_name,
        .checksum_type = type_name,
        .tags_json = tags_json(tags),
        .lock_mode = lock.retention ? std::string(s3::to_string(lock.retention->mode)) : "",
        .lock_until_ms = lock.retention ? to_millis(lock.retention->retain_until) : 0,
        .legal_hold = lock.legal_hold,
        .sse = std::string(sse_name(sse.mode)),
        .sse_key_check = sse.mode == sealing::customer
                             ? std::optional<std::string>(make_key_check(sse.customer_key))
                             : std::nullopt,
        .acl = acl,
    };
    const std::string details = "{\"upload_id\":\"" + row.upload_id + "\"}";
    auto created =
        co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<multipart_upload>> {
            auto upload = co_await insert_upload(c, row);
            co_await append_object_audit(c, who, "multipart.create", target.id, key, details);
            co_return upload;
        });
    co_return created;
}

asio::awaitable<result<multipart_upload>>
multipart_service::find(std::int64_t bucket_id, std::string_view key, std::string_view upload_id)
{
    auto conn = co_await pool_.acquire();
    auto upload = co_await find_upload(*conn, bucket_id, key, upload_id);
    if (!upload)
        co_return no_such_upload();
    co_return std::move(*upload);
}

asio::awaitable<result<part_info>>
multipart_service::publish_part(const audit_context& who, const multipart_upload& upload, int part_number,
                                part_digest digest, std::vector<segment> segments,
                                std::optional<ingested> fresh, std::optional<copy_source> source)
{
    std::vector<std::string> unreferenced;
    auto published = co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<part_info>> {
        unreferenced.clear();
        if (!co_await lock_upload(c, upload.row, false))
            co_return no_such_upload();
        std::vector<segment> segs = segments;
        if (fresh) {
            auto published = co_await publish_blobs(c, *fresh, unreferenced, part_number);
            if (!published)
                co_return std::move(published).error();
            segs = std::move(*published);
        } else {
            // The source's segments are its blobs only while its version row is there: held until the commit
            // (a delete waits), or gone (a delete came first and may have dropped the blobs).
            if (source && !co_await lock_copy_source(c, source->row, source->pinned))
                co_return copy_source_gone();
            std::vector<std::int64_t> blobs;
            for (const auto& s : segs)
                blobs.push_back(s.blob_row);
            co_await add_references(c, blobs);
        }
        // Re-uploading a part number replaces the part; the replaced part's bytes lose this reference.
        co_await release_part(c, upload.row, part_number, unreferenced);
        const part_row part{.upload_row = upload.row,
                            .part_number = part_number,
                            .size = digest.size,
                            .etag = digest.etag,
                            .checksum = digest.checksum,
                            .crc64nvme = digest.crc64nvme};
        const time_point uploaded = co_await insert_part(c, part, segs);
        const std::string details = "{\"upload_id\":" + audit_quote(upload.upload_id) +
                                    ",\"part_number\":" + std::to_string(part_number) +
                                    ",\"size\":" + std::to_string(digest.size) +
                                    ",\"etag\":" + audit_quote(digest.etag) + digest.audit_extra + "}";
        co_await append_object_audit(c, who, "multipart.part", upload.bucket_id, upload.key, details);
        co_return part_info{.part_number = part_number,
                            .size = digest.size,
                            .etag = digest.etag,
                            .last_modified = uploaded,
                            .checksum = digest.checksum};
    });
    // Rolled back: only the new blobs are garbage (the replaced part is still referenced).
    if (!published && fresh)
        co_await discard_ingested(store_, pool_, *fresh);
    else if (published)
        co_await remove_blobs(store_, std::move(unreferenced));
    co_return published;
}

asio::awaitable<result<part_info>>
multipart_service::upload_part(const audit_context& who, const multipart_upload& upload, int part_number,
                               byte_source& body, ingest_limits limits, std::string customer_key)
{
    limits.max_size = std::min(limits.max_size, limits_.max_part_size);
    limits.body_sha256 = false; // a part's content identity is its pieces'; nothing reads the part's own
    // A part carries the upload's checksum algorithm; one the client did not send is computed here.
    if (limits.checksum && upload.algorithm && *limits.checksum != *upload.algorithm)
        co_return make_error(errc::invalid_request,
                             "Checksum Type mismatch occurred, expected checksum Type: " +
                                 std::string(to_string(*upload.algorithm)) +
                                 ", actual checksum Type: " + std::string(to_string(*limits.checksum)));
    if (upload.algorithm)
        limits.checksum = upload.algorithm;
    // Encrypted as the upload is: every part through a sealed view of the store.
    const sealing mode = sealing_of(upload.sse);
    limits.sealed = mode;
    auto view = sealed_view(store_, mode, {.master = sse_master_key_, .customer = customer_key});
    if (!view)
        co_return std::move(view).error();
    auto in = co_await ingest(**view, pool_, body, limits);
    if (!in)
        co_return std::move(in).error();
    part_digest digest{.size = in->size,
                       .etag = sse_etag(mode, customer_key, in->md5),
                       .checksum = upload.algorithm ? encode_checksum(in->checksum) : std::string(),
                       .crc64nvme = in->crc64nvme,
                       .audit_extra = {}};
    if (in->blobs.empty())
        co_return co_await publish_part(who, upload, part_number, std::move(digest), {}, std::nullopt);
    std::exception_ptr crash;
    try {
        co_return co_await publish_part(who, upload, part_number, std::move(digest), {}, *in);
    } catch (...) {
        crash = std::current_exception();
    }
    co_await discard_new_blobs(store_, pool_, *in, crash);
    std::rethrow_exception(crash);
}

asio::awaitable<result<part_info>> multipart_service::copy_part(const audit_context& who,
                                                                const multipart_upload& upload,
                                                                int part_number, const object_handle& source,
                                                                std::uint64_t first, std::uint64_t length,
                                                                bool source_pinned)
{
    if (length > max_copy_source_size)
        co_return make_error(errc::invalid_request,
                             "The specified copy source is larger than the maximum allowable size for a copy "
                             "source: " +
                                 std::to_string(max_copy_source_size));
    // The part references the source's blobs over the range: no byte is written. Its digests (ETag,
    // checksums) need the bytes, which are read once.
    std::vector<segment> segs;
    std::uint64_t start = 0;
    for (const auto& s : source.segments) {
        const std::uint64_t end = start + s.length;
        if (end > first && start < first + length) {
            const std::uint64_t from = std::max(first, start);
            const std::uint64_t to = std::min(first + length, end);
            segs.push_back(segment{.blob_row = s.blob_row,
                                   .store_id = s.store_id,
                                   .offset = s.offset + (from - start),
                                   .length = to - from,
                                   .sealed = s.sealed});
        }
        start = end;
    }
    hasher md5(digest_kind::md5);
    checksummer crc64(checksum_algorithm::crc64nvme);
    std::optional<checksummer> declared;
    if (upload.algorithm)
        declared.emplace(*upload.algorithm);
    object_service reader(pool_, store_);
    reader.set_sse_master_key(sse_master_key_);
    auto src = reader.read(source, first, length);
    std::vector<std::byte> buf(1 << 20);
    for (;;) {
        auto n = co_await src->read_some(buf);
        if (!n) {
            // A delete of the source that committed meanwhile may have removed its blobs.
            auto conn = co_await pool_.acquire();
            if (!co_await lock_copy_source(*conn, source.version.row_id, source_pinned))
                co_return copy_source_gone();
            co_return std::move(n).error();
        }
        if (*n == 0)
            break;
        std::span<const std::byte> data(buf.data(), *n);
        md5.update(data);
        crc64.update(data);
        if (declared)
            declared->update(data);
    }
    std::string audit_extra;
    {
        auto conn = co_await pool_.acquire();
        const std::string bucket_name = co_await bucket_name_of(*conn, source.version.bucket_id);
        audit_extra = ",\"copy_source\":" + audit_quote(bucket_name + "/" + source.version.key);
        if (!source.version.version_id.empty())
            audit_extra += ",\"copy_source_version_id\":" + audit_quote(source.version.version_id);
    }
    part_digest digest{.size = length,
                       .etag = to_hex(md5.finish()),
                       .checksum = declared ? encode_checksum(declared->finish()) : std::string(),
                       .crc64nvme = crc64.finish(),
                       .audit_extra = std::move(audit_extra)};
    co_return co_await publish_part(who, upload, part_number, std::move(digest), std::move(segs),
                                    std::nullopt,
                                    copy_source{.row = source.version.row_id, .pinned = source_pinned});
}

asio::awaitable<result<parts_page>> multipart_service::list_parts(const multipart_upload& upload, int marker,
                                                                  int max_parts)
{
    parts_page page;
    page.upload = upload;
    auto conn = co_await pool_.acquire();
    auto parts = co_await parts_after(*conn, upload.row, marker, max_parts + 1);
    for (auto& part : parts) {
        if (static_cast<int>(page.parts.size()) == max_parts) {
            page.truncated = true;
            break;
        }
        page.parts.push_back(std::move(part));
    }
    if (!page.parts.empty())
        page.next_marker = page.parts.back().part_number;
    co_return page;
}

namespace {

/// CompleteMultipartUpload's list: at least one part, in ascending order.
result<void> check_part_list(const std::vector<completed_part_ref>& wanted)
{
    if (wanted.empty())
        return make_error(errc::malformed_xml, "You must specify at least one part");
    for (std::size_t i = 1; i < wanted.size(); ++i)
        if (wanted[i].part_number <= wanted[i - 1].part_number)
            return make_error(errc::invalid_part_order,
                              "The list of parts was not in ascending order. Parts must be ordered by part "
                              "number.");
    return ok();
}

/// The version a completed upload made, when `wanted` is the part list it was completed with and the version
/// still exists: a repeated CompleteMultipartUpload (a client retrying after a lost response), which S3
/// answers with success. Records an audit row for the repeat. nullopt otherwise.
asio::awaitable<std::optional<object_version>> completed_before(const audit_context& who, pg::pool& pool,
                                                                std::int64_t bucket_id, std::string_view key,
                                                                std::string_view upload_id,
                                                                const std::vector<completed_part_ref>& wanted)
{
    // The same part list as the completion (its multipart ETag), and the version still there (not deleted).
    std::vector<std::string> etags;
    for (const auto& w : wanted)
        etags.emplace_back(s3::unquote_etag(w.etag));
    auto etag = s3::multipart_etag(etags);
    if (!etag)
        co_return std::nullopt;
    auto found = co_await transact(pool, [&](pg::connection& c) -> asio::awaitable<result<object_version>> {
        auto found = co_await version_of_upload(c, bucket_id, key, upload_id);
        if (!found || found->etag != *etag)
            co_return no_such_upload();
        object_version v = std::move(*found);
        // Audited like a delete that found nothing: the request succeeded, nothing changed.
        co_await append_object_audit(
            c, who, "object.put", bucket_id, v.key,
            "{\"version_id\":" + audit_quote(v.version_id) + ",\"size\":" + std::to_string(v.size) +
                ",\"etag\":" + audit_quote(v.etag) + ",\"multipart\":true,\"repeated\":true}");
        co_return v;
    });
    if (!found)
        co_return std::nullopt;
    co_return std::move(*found);
}

} // namespace

asio::awaitable<result<object_version>>
multipart_service::complete(const audit_context& who, std::int64_t bucket_id, std::string_view key,
                            std::string_view upload_id, std::vector<completed_part_ref> wanted,
                            write_preconditions conditions)
{
    if (auto listed = check_part_list(wanted); !listed)
        co_return std::move(listed).error();
    auto upload = co_await find(bucket_id, key, upload_id);
    if (!upload) {
        if (upload.error().code == errc::no_such_upload)
            if (auto again = co_await completed_before(who, pool_, bucket_id, key, upload_id, wanted))
                co_return std::move(*again);
        co_return std::move(upload).error();
    }
    std::vector<std::string> unreferenced;
    auto done = co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<object_version>> {
        unreferenced.clear();
        co_return co_await complete_in(c, who, *upload, wanted, conditions, unreferenced);
    });
    co_await remove_blobs(store_, std::move(unreferenced));
    co_return done;
}

asio::awaitable<result<object_version>>
multipart_service::complete_in(pg::connection& c, const audit_context& who, const multipart_upload& upload,
                               const std::vector<completed_part_ref>& wanted,
                               const write_preconditions& conditions, std::vector<std::string>& unreferenced)
{
    auto completed = co_await publish_in(c, upload, wanted, conditions, unreferenced);
    // One row for the write, with the ACL it stored (publish_in inserted it with the version), whichever
    // request completed it (CompleteMultipartUpload, a model version's uploads).
    if (completed) {
        // A named value, not a temporary in the co_await's arguments: GCC 12 destroys those twice.
        const std::string details = "{\"version_id\":" + audit_quote(completed->version_id) +
                                    ",\"size\":" + std::to_string(completed->size) +
                                    ",\"etag\":" + audit_quote(completed->etag) + ",\"multipart\":true" +
                                    (upload.acl.empty() ? "" : ",\"acl\":" + audit_quote(upload.acl)) + "}";
        co_await append_object_audit(c, who, "object.put", upload.bucket_id, completed->key, details);
    }
    co_return completed;
}

asio::awaitable<result<object_version>>
multipart_service::publish_in(pg::connection& c, const multipart_upload& upload,
                              const std::vector<completed_part_ref>& wanted,
                              const write_preconditions& conditions, std::vector<std::string>& unreferenced)
{
    if (auto listed = check_part_list(wanted); !listed)
        co_return std::move(listed).error();
    const auto bucket_id = upload.bucket_id;
    const std::string_view key = upload.key;

    if (!co_await lock_upload(c, upload.row, true))
        co_return no_such_upload();
    auto mode = co_await lock_bucket_versioning(c, bucket_id);
    if (!mode)
        co_return make_error(errc::no_such_bucket, "The specified bucket does not exist");
    auto stored = co_await stored_parts(c, upload.row);

    object_version v;
    v.bucket_id = bucket_id;
    v.key = std::string(key);
    v.version_id = "null";
    v.owner_id = upload.owner_id;
    v.headers = upload.headers;
    v.tags = upload.tags;
    v.retention = upload.retention;
    v.legal_hold = upload.legal_hold;
    v.sse = upload.sse;
    v.sse_key_check = upload.sse_key_check;
    v.parts_count = static_cast<int>(wanted.size());
    std::vector<segment> manifest;
    std::vector<std::string> etags;
    std::vector<std::string> raw_checksums;
    std::vector<part_checksum> crcs;
    object_part_rows part_rows;
    for (const auto& w : wanted) {
        auto it = stored.find(w.part_number);
        if (it == stored.end() || it->second.etag != s3::unquote_etag(w.etag))
            co_return make_error(
                errc::invalid_part,
                "One or more of the specified parts could not be found. The part may not have "
                "been uploaded, or the specified entity tag may not match the part's entity tag.");
    }
    for (std::size_t i = 0; i < wanted.size(); ++i) {
        auto it = stored.find(wanted[i].part_number);
        if (it == stored.end() || it->second.etag != s3::unquote_etag(wanted[i].etag))
            co_return make_error(
                errc::invalid_part,
                "One or more of the specified parts could not be found. The part may not have "
                "been uploaded, or the specified entity tag may not match the part's entity tag.");
        const auto& part = it->second;
        if (!wanted[i].checksum.empty() && wanted[i].checksum != part.checksum)
            co_return make_error(errc::invalid_part,
                                 "The checksum of part " + std::to_string(it->first) +
                                     " does not match the checksum of the uploaded part.");
        if (i + 1 < wanted.size() && part.size < limits_.min_part_size)
            co_return make_error(errc::entity_too_small,
                                 "Your proposed upload is smaller than the minimum allowed size");
        part_rows.numbers.push_back(it->first);
        part_rows.offsets.push_back(static_cast<std::int64_t>(v.size));
        part_rows.sizes.push_back(static_cast<std::int64_t>(part.size));
        part_rows.checksums.push_back(part.checksum);
        v.size += part.size;
        etags.push_back(part.etag);
        if (upload.algorithm) {
            auto raw = decode_checksum(*upload.algorithm, part.checksum);
            if (raw)
                raw_checksums.push_back(std::move(*raw));
            if (raw && is_crc(*upload.algorithm))
                crcs.push_back(part_checksum{raw_checksums.back(), part.size});
        } else {
            crcs.push_back(part_checksum{part.crc64nvme, part.size});
        }
        manifest.insert(manifest.end(), part.segments.begin(), part.segments.end());
    }
    if (conditions.object_size && *conditions.object_size != v.size)
        co_return make_error(errc::invalid_request, "The specified object size " +
                                                        std::to_string(*conditions.object_size) +
                                                        " does not match the size of the listed parts, " +
                                                        std::to_string(v.size) + ".");
    auto etag = s3::multipart_etag(etags);
    if (!etag)
        co_return std::move(etag).error();
    v.etag = std::move(*etag);
    // The object's checksum: the upload's algorithm and type, or S3's default CRC64NVME over the whole
    // object, combined from the parts' CRCs without reading a byte.
    if (!upload.algorithm) {
        v.checksum_algorithm = "CRC64NVME";
        v.checksum_type = "FULL_OBJECT";
        v.checksum_value = encode_checksum(full_object_checksum(checksum_algorithm::crc64nvme, crcs));
    } else if (upload.type == checksum_type::composite) {
        v.checksum_algorithm = std::string(to_string(*upload.algorithm));
        v.checksum_type = "COMPOSITE";
        v.checksum_value = composite_checksum(*upload.algorithm, raw_checksums);
    } else {
        v.checksum_algorithm = std::string(to_string(*upload.algorithm));
        v.checksum_type = "FULL_OBJECT";
        v.checksum_value = encode_checksum(full_object_checksum(*upload.algorithm, crcs));
    }

    if (conditions.checksum && *conditions.checksum != v.checksum_value &&
        *conditions.checksum != v.checksum_value.substr(0, v.checksum_value.find('-')))
        co_return make_error(errc::bad_digest, "The " + v.checksum_algorithm +
                                                   " you specified did not match the calculated checksum.");
    auto current = co_await lock_current(c, bucket_id, key);
    if (auto met = check_write_conditions(conditions.if_match, conditions.if_none_match, current); !met)
        co_return std::move(met).error();

    // The listed parts' references move to the object's segments; the others are released with the
    // upload.
    std::vector<std::int64_t> moved, dropped;
    for (const auto& s : manifest)
        moved.push_back(s.blob_row);
    for (auto& [number, part] : stored)
        for (const auto& s : part.segments)
            dropped.push_back(s.blob_row);
    co_await add_references(c, moved);
    co_await delete_upload(c, upload.row);
    co_await drop_references(c, dropped, unreferenced);

    auto slot = co_await retire_current(c, *mode, bucket_id, key, current, unreferenced);
    v.version_id = slot.version_id;
    auto [row, modified] = co_await insert_version(c, v, slot.seq);
    co_await insert_segments(c, row, manifest);
    co_await set_version_upload(c, row, upload.upload_id);
    if (!upload.acl.empty())
        co_await insert_version_acl(c, row, upload.acl);
    co_await insert_object_parts(c, row, part_rows);
    v.row_id = row;
    v.last_modified = from_millis(modified);
    co_return v;
}

asio::awaitable<void> multipart_service::release(std::vector<std::string> unreferenced)
{
    co_await remove_blobs(store_, std::move(unreferenced));
}

asio::awaitable<bool> multipart_service::abort_row(const audit_context& who, pg::connection& c,
                                                   std::int64_t row, std::vector<std::string>& unreferenced)
{
    if (!co_await lock_upload(c, row, true))
        co_return false;
    auto removed = co_await delete_upload_returning(c, row);
    co_await drop_references(c, removed.blob_rows, unreferenced);
    // By a client (AbortMultipartUpload) or by the age-based cleanup (actor "system").
    const std::string details = "{\"upload_id\":\"" + removed.upload_id + "\"}";
    co_await append_object_audit(c, who, "multipart.abort", removed.bucket_id, removed.key, details);
    co_return true;
}

asio::awaitable<result<void>> multipart_service::abort(const audit_context& who, std::int64_t bucket_id,
                                                       std::string_view key, std::string_view upload_id)
{
    auto upload = co_await find(bucket_id, key, upload_id);
    if (!upload)
        co_return std::move(upload).error();
    std::vector<std::string> unreferenced;
    auto aborted = co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
        unreferenced.clear();
        if (!co_await abort_row(who, c, upload->row, unreferenced))
            co_return no_such_upload();
        co_return ok();
    });
    co_await remove_blobs(store_, std::move(unreferenced));
    co_return aborted;
}

asio::awaitable<result<uploads_page>> multipart_service::list_uploads(uploads_request req)
{
    uploads_page page;
    if (req.max_uploads == 0)
        co_return page;
    auto conn = co_await pool_.acquire();
    std::string key_bound = req.key_marker;
    std::string id_bound = req.key_marker.empty() ? std::string() : req.upload_id_marker;
    // Without an upload-id-marker, the key-marker's own uploads are skipped (S3 semantics).
    bool skip_marker_key = !req.key_marker.empty() && req.upload_id_marker.empty();
    std::size_t count = 0;
    for (;;) {
        const std::size_t batch = std::min<std::size_t>(req.max_uploads - count + 1, 1000);
        const uploads_seek seek{.bucket_id = req.bucket_id,
                                .key_bound = key_bound,
                                .id_bound = id_bound,
                                .prefix = req.prefix,
                                .skip_key_bound = skip_marker_key,
                                .limit = static_cast<std::int64_t>(batch)};
        auto rs = co_await uploads_after(*conn, seek);
        skip_marker_key = false;
        bool reseek = false;
        for (auto& upload : rs) {
            if (upload.key.compare(0, req.prefix.size(), req.prefix) != 0)
                co_return page;
            if (count == req.max_uploads) {
                page.truncated = true;
                co_return page;
            }
            std::size_t cut =
                req.delimiter.empty() ? std::string::npos : upload.key.find(req.delimiter, req.prefix.size());
            if (cut != std::string::npos) {
                std::string common = upload.key.substr(0, cut + req.delimiter.size());
                page.common_prefixes.push_back(common);
                ++count;
                page.next_key_marker = common;
                page.next_upload_id_marker.clear();
                // Continue after every key under this common prefix: at its successor, inclusive.
                key_bound = s3::prefix_successor(common);
                if (key_bound.empty())
                    co_return page;
                id_bound.clear();
                reseek = true;
                break;
            }
            page.next_key_marker = upload.key;
            page.next_upload_id_marker = upload.upload_id;
            key_bound = upload.key;
            id_bound = upload.upload_id;
            page.uploads.push_back(std::move(upload));
            ++count;
        }
        if (!reseek && static_cast<std::size_t>(rs.size()) < batch)
            co_return page;
    }
}

asio::awaitable<std::size_t> multipart_service::abort_rows(const audit_context& who,
                                                           std::vector<std::int64_t> rows)
{
    std::size_t aborted = 0;
    for (auto row : rows) {
        std::vector<std::string> unreferenced;
        auto done = co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<bool>> {
            unreferenced.clear();
            co_return co_await abort_row(who, c, row, unreferenced);
        });
        if (done && *done)
            ++aborted;
        co_await remove_blobs(store_, std::move(unreferenced));
    }
    co_return aborted;
}

asio::awaitable<std::size_t> multipart_service::abort_all(const audit_context& who, std::int64_t bucket_id)
{
    std::vector<std::int64_t> rows;
    {
        auto conn = co_await pool_.acquire();
        rows = co_await upload_rows_of(*conn, bucket_id);
    }
    co_return co_await abort_rows(who, std::move(rows));
}

asio::awaitable<std::size_t> multipart_service::abort_initiated_before(const audit_context& who,
                                                                       time_point cutoff)
{
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(cutoff.time_since_epoch()).count();
    std::vector<std::int64_t> rows;
    {
        auto conn = co_await pool_.acquire();
        rows = co_await upload_rows_initiated_before(*conn, static_cast<std::int64_t>(ms));
    }
    co_return co_await abort_rows(who, std::move(rows));
}

} // namespace depot::registry
