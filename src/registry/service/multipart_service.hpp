#pragma once
/// \file
/// Multipart uploads. Parts are ingested like objects (verified, committed blobs, deduplicated) and kept as
/// manifests; completing concatenates the listed parts' manifests into a new object version in one
/// transaction, so readers see the old object or the new one and no byte is copied. Upload, Complete and
/// Abort of one upload serialize on its row (parts take it FOR SHARE, Complete and Abort FOR UPDATE), so a
/// racing Abort and Complete leave exactly one outcome, and a part that commits after either is refused.

#include "common/checksum.hpp"
#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/service/content.hpp"
#include "registry/service/object_service.hpp"
#include "registry/service/sse.hpp"
#include "registry/types.hpp"
#include "storage/blob_store.hpp"

#include <boost/asio/awaitable.hpp>
#include <chrono>

namespace depot::registry {

struct parts_page
{
    multipart_upload upload;
    std::vector<part_info> parts;
    bool truncated = false;
    int next_marker = 0;
};

struct uploads_request
{
    std::int64_t bucket_id = 0;
    std::string prefix;
    std::string delimiter;
    std::string key_marker;
    std::string upload_id_marker;
    std::size_t max_uploads = 1000;
};

struct uploads_page
{
    std::vector<multipart_upload> uploads;
    std::vector<std::string> common_prefixes;
    bool truncated = false;
    std::string next_key_marker;
    std::string next_upload_id_marker;
};

/// A part named in CompleteMultipartUpload.
struct completed_part_ref
{
    int part_number = 0;
    std::string etag;     ///< bare
    std::string checksum; ///< base64 as listed in the request (in the upload's algorithm), empty if absent
};

/// Conditional write headers (If-Match / If-None-Match) checked atomically with the publish.
struct write_preconditions
{
    std::optional<std::string> if_match;
    std::optional<std::string> if_none_match;
    /// A whole-object checksum the client asserted on CompleteMultipartUpload (base64, with or without the
    /// "-N" suffix); bad_digest when it differs from the computed one.
    std::optional<std::string> checksum;
    /// The object's size the client asserted (x-amz-mp-object-size); invalid_request when the listed parts
    /// add up to another size.
    std::optional<std::uint64_t> object_size;
};

/// The most bytes one UploadPartCopy may copy (S3's limit on a copy source).
inline constexpr std::uint64_t max_copy_source_size = 5ull << 30;

/// The defaults of multipart_service::create: no lock, no encryption.
inline const s3::requested_lock no_lock{};
inline const sse_spec no_sse{};
inline const std::string no_acl{};

struct multipart_limits
{
    /// Every part but the last must have at least this many bytes (S3: 5 MiB).
    std::uint64_t min_part_size = 5ull << 20;
    std::uint64_t max_part_size = 5ull << 30;
};

class multipart_service
{
public:
    multipart_service(pg::pool& pool, storage::blob_store& store, multipart_limits limits = {})
        : pool_(pool), store_(store), limits_(limits)
    {}

    /// `algorithm`/`type`: the flexible checksum the parts carry; invalid_request for a combination S3 does
    /// not support (e.g. FULL_OBJECT with SHA-256). `tags`: the completed object's tag set (validated by the
    /// caller). `acl`: the completed object's ACL in its stored form (checked by the caller; empty: default).
    /// `lock`, `sse` and `acl` are references to objects that outlive the call (the defaults are static): GCC
    /// 12 copied a by-value sse_spec into the coroutine frame bitwise (ASan: its string freed from another
    /// frame when this one died).
    asio::awaitable<result<multipart_upload>>
    create(const audit_context& who, const bucket& target, std::string key, std::string owner_id,
           object_headers headers, std::optional<checksum_algorithm> algorithm = std::nullopt,
           std::optional<checksum_type> type = std::nullopt, std::vector<s3::tag> tags = {},
           const s3::requested_lock& lock = no_lock, const sse_spec& sse = no_sse,
           const std::string& acl = no_acl);

    /// The SSE master key SSE-S3 parts are sealed under (see object_service::set_sse_master_key).
    void set_sse_master_key(std::string key) { sse_master_key_ = std::move(key); }

    /// no_such_upload unless `upload_id` is an active upload of this bucket and key.
    asio::awaitable<result<multipart_upload>> find(std::int64_t bucket_id, std::string_view key,
                                                   std::string_view upload_id);

    /// Stores a part, replacing any earlier part with the same number (whose bytes are then released). The
    /// part is encrypted as the upload is (sealed under the master key, or under `customer_key`, which the
    /// caller checked against upload.sse_key_check).
    asio::awaitable<result<part_info>> upload_part(const audit_context& who, const multipart_upload& upload,
                                                   int part_number, byte_source& body, ingest_limits limits,
                                                   std::string customer_key = {});

    /// Stores a part that references `[first, first + length)` of an existing object (UploadPartCopy). As
    /// CopyObject does, the part takes its references with the source version locked (FOR SHARE), so a
    /// concurrent delete of the source either waits for the part or makes it fail cleanly. Errors:
    /// invalid_request (more than max_copy_source_size bytes), no_such_key (the source version is gone, or
    /// is no longer current when not `source_pinned`, i.e. not named by version id), no_such_upload.
    asio::awaitable<result<part_info>> copy_part(const audit_context& who, const multipart_upload& upload,
                                                 int part_number, const object_handle& source,
                                                 std::uint64_t first, std::uint64_t length,
                                                 bool source_pinned = false);

    asio::awaitable<result<parts_page>> list_parts(const multipart_upload& upload, int marker, int max_parts);

    /// Publishes the object. Errors: no_such_upload, invalid_part (missing part, ETag or checksum mismatch),
    /// invalid_part_order, entity_too_small, malformed_xml (no parts), precondition_failed.
    asio::awaitable<result<object_version>> complete(const audit_context& who, std::int64_t bucket_id,
                                                     std::string_view key, std::string_view upload_id,
                                                     std::vector<completed_part_ref> parts,
                                                     write_preconditions conditions = {});

    /// `complete` inside the caller's transaction (for an upload `find` returned), so that several uploads
    /// and what follows commit together, with the write's object.put row (by `who`), as `complete` writes it.
    /// Blobs that lost their last reference are added to `unreferenced`; pass them to `release` after the
    /// commit.
    asio::awaitable<result<object_version>> complete_in(pg::connection& c, const audit_context& who,
                                                        const multipart_upload& upload,
                                                        const std::vector<completed_part_ref>& parts,
                                                        const write_preconditions& conditions,
                                                        std::vector<std::string>& unreferenced);
    /// Deletes blobs that lost their last reference in a committed transaction.
    asio::awaitable<void> release(std::vector<std::string> unreferenced);

    /// no_such_upload when it does not exist (anymore).
    asio::awaitable<result<void>> abort(const audit_context& who, std::int64_t bucket_id,
                                        std::string_view key, std::string_view upload_id);

    asio::awaitable<result<uploads_page>> list_uploads(uploads_request request);

    /// Aborts every upload of a bucket (DeleteBucket), returns how many.
    asio::awaitable<std::size_t> abort_all(const audit_context& who, std::int64_t bucket_id);

    /// Aborts uploads initiated before `cutoff` (the abandoned-upload cleanup), returns how many.
    asio::awaitable<std::size_t> abort_initiated_before(const audit_context& who, time_point cutoff);

private:
    /// complete_in without its audit row.
    asio::awaitable<result<object_version>> publish_in(pg::connection& c, const multipart_upload& upload,
                                                       const std::vector<completed_part_ref>& parts,
                                                       const write_preconditions& conditions,
                                                       std::vector<std::string>& unreferenced);
    /// Aborts each upload row in its own transaction; returns how many were still there.
    asio::awaitable<std::size_t> abort_rows(const audit_context& who, std::vector<std::int64_t> rows);
    /// Aborts one upload row inside a transaction; false when it is already gone.
    asio::awaitable<bool> abort_row(const audit_context& who, pg::connection& c, std::int64_t row,
                                    std::vector<std::string>& unreferenced);
    struct part_digest
    {
        std::uint64_t size = 0;
        std::string etag;      ///< hex MD5
        std::string checksum;  ///< base64 in the upload's algorithm, or empty
        std::string crc64nvme; ///< raw
        /// Members added to the part's audit row: the source of an UploadPartCopy (`,"copy_source":...`).
        std::string audit_extra;
    };
    /// The version an UploadPartCopy copies from (see copy_part).
    struct copy_source
    {
        std::int64_t row = 0;
        bool pinned = false;
    };
    asio::awaitable<result<part_info>> publish_part(const audit_context& who, const multipart_upload& upload,
                                                    int part_number, part_digest digest,
                                                    std::vector<segment> segments,
                                                    std::optional<ingested> fresh,
                                                    std::optional<copy_source> source = std::nullopt);

    pg::pool& pool_;
    storage::blob_store& store_;
    multipart_limits limits_;
    std::string sse_master_key_;
};

} // namespace depot::registry
