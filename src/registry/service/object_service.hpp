#pragma once
/// \file
/// Objects: the only code that touches both the registry and the blob store.
///
/// Write protocol ("data first, metadata last"): bytes stream into a new blob while MD5 and SHA-256 are
/// computed; the declared digests and length are checked; then one SQL transaction publishes the object
/// (content row with dedup on (sha256, size), version row, segments, release of the version it replaces).
/// A failure before the commit aborts the blob writer, so a rejected request leaves no blob and no row; a
/// crash leaves at most an uncommitted or unreferenced blob for the collector. Pieces of a body committed
/// while it still arrives are named by intents until the publish, so the collector never takes them (see
/// content.hpp). Blobs whose last reference is dropped are removed after the commit.

#include "common/byte_source.hpp"
#include "common/checksum.hpp"
#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/service/sse.hpp"
#include "registry/types.hpp"
#include "registry/vocabulary.hpp"
#include "storage/blob_store.hpp"

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;
class lookup_cache;

struct put_object_request
{
    const bucket* target = nullptr;
    std::string key;
    std::string owner_id;
    object_headers headers;
    /// Declared length (Content-Length or x-amz-decoded-content-length); the body must match it exactly.
    std::optional<std::uint64_t> content_length;
    /// Raw digests the client asserted (Content-MD5, a signed x-amz-content-sha256); empty = none.
    std::string expected_md5;
    std::string expected_sha256;
    /// Upper bound for the object size (EntityTooLarge beyond it).
    std::uint64_t max_size = 5ull << 30;
    /// Flexible checksum asserted by the client (see ingest_limits).
    std::optional<checksum_algorithm> checksum;
    std::optional<std::string> checksum_value;
    std::function<std::optional<std::string>()> trailer_checksum;
    /// Conditional write: If-Match / If-None-Match, checked atomically with the publish.
    std::optional<std::string> if_match;
    std::optional<std::string> if_none_match;
    byte_source* body = nullptr;
    /// The new version's tag set (x-amz-tagging), validated by the caller (s3::check_tag_set).
    std::vector<s3::tag> tags = {};
    /// Object Lock headers (validated by the caller, only on an Object Lock bucket): the new version's
    /// retention (nullopt: the bucket's default, if any) and legal hold.
    std::optional<s3::retention> retention = std::nullopt;
    std::optional<bool> legal_hold = std::nullopt;
    /// Server-side encryption (x-amz-server-side-encryption*, or the bucket's default).
    sse_spec sse = {};
    /// The new version's ACL (s3::stored_acl; "" = the default, the owner's FULL_CONTROL alone): stored in
    /// the publish transaction, named in the write's audit row ("acl"), never a change of its own.
    std::string acl = {};
    /// The audit row's action, and members added to its details (`,"source":...`): a CopyObject that
    /// re-encrypts is a put of the source's bytes, audited as the copy it is.
    std::string audit_action = "object.put";
    std::string audit_extra = {};
};

struct copy_object_request
{
    const bucket* source_bucket = nullptr;
    std::string source_key;
    const bucket* target = nullptr;
    std::string key;
    std::string owner_id;
    /// Replaces the source's headers and metadata when set (x-amz-metadata-directive: REPLACE).
    std::optional<object_headers> replace_headers;
    /// Replaces the source's tag set when set (x-amz-tagging-directive: REPLACE); validated by the caller.
    std::optional<std::vector<s3::tag>> replace_tags = std::nullopt;
    /// The copy's own Object Lock (a copy never takes the source's lock): as put_object_request's.
    std::optional<s3::retention> retention = std::nullopt;
    std::optional<bool> legal_hold = std::nullopt;
    /// Checked against the source version inside the transaction (copy-source conditionals are evaluated
    /// by the caller on this version before it asks for the copy).
    std::int64_t expected_source_row = 0;
    /// The source was named by version id (x-amz-copy-source ?versionId=): it need not be current.
    bool source_version_pinned = false;
    /// Conditional write on the target (If-Match / If-None-Match), checked against the target key's current
    /// version as put_object_request's are, atomically with the publish.
    std::optional<std::string> if_match = std::nullopt;
    std::optional<std::string> if_none_match = std::nullopt;
    /// The copy's ACL, as put_object_request's (the source's ACL is never copied).
    std::string acl = {};
};

/// DeleteObject / one entry of DeleteObjects.
struct delete_request
{
    std::int64_t bucket_id = 0;
    std::string key;
    /// Deletes this version permanently (S3 ?versionId=); without it, the key's current version is deleted
    /// (never-versioned bucket) or hidden behind a new delete marker (versioned bucket).
    /// Precondition: is_valid_version_id.
    std::optional<std::string> version_id;
    /// Owner of a delete marker this creates (the requester); empty = the bucket's owner.
    std::string owner_id;
    /// x-amz-bypass-governance-retention, once auth allowed it: a version under GOVERNANCE retention may be
    /// deleted. A version in COMPLIANCE retention or under legal hold never is (access_denied).
    bool bypass_governance = false;
};

struct delete_outcome
{
    /// x-amz-version-id: the delete marker created, or the version named in the request; empty in a
    /// never-versioned bucket without version id.
    std::string version_id;
    /// x-amz-delete-marker: a delete marker was created, or the version deleted was one.
    bool delete_marker = false;
};

/// One ListObjectVersions page request.
struct list_versions_request
{
    std::int64_t bucket_id = 0;
    std::string prefix;
    std::string delimiter;
    std::string key_marker;
    /// With key_marker: continue with that key's versions older than this one. Precondition:
    /// is_valid_version_id (or empty).
    std::string version_id_marker;
    std::size_t max_keys = 1000;
};

struct version_listing_entry
{
    std::string key;
    std::string version_id;
    bool is_latest = false;
    bool is_delete_marker = false;
    std::uint64_t size = 0;
    std::string etag;
    time_point last_modified;
    std::string owner_id;
    std::string owner_display_name;
    std::string checksum_algorithm;
    std::string checksum_type;
};

struct versions_page
{
    std::vector<version_listing_entry> entries; ///< by key, then newest first
    std::vector<std::string> common_prefixes;
    bool truncated = false;
    /// Where the next page starts: NextKeyMarker (the last key or common prefix) and NextVersionIdMarker
    /// (empty when the page ended with a common prefix).
    std::string next_key_marker;
    std::string next_version_id_marker;
};

struct listing_entry
{
    std::string key;
    std::uint64_t size = 0;
    std::string etag;
    time_point last_modified;
    std::string owner_id;
    std::string owner_display_name;
};

struct list_request
{
    std::int64_t bucket_id = 0;
    std::string prefix;
    std::string delimiter;
    /// Exclusive lower bound (marker / start-after / decoded continuation token); empty = from the start.
    std::string after;
    std::size_t max_keys = 1000;
    /// Lists the bucket as of this commit sequence number (a snapshot) instead of its current keys; 0 = now.
    std::int64_t as_of = 0;
    /// Only keys starting with this (a snapshot's prefix), whatever `prefix` says.
    std::string within;
};

struct list_page
{
    std::vector<listing_entry> contents;
    std::vector<std::string> common_prefixes;
    bool truncated = false;
    /// The last key or common prefix returned; where the next page starts (exclusive).
    std::string last;
};

/// One part of a multipart object.
struct object_part_info
{
    int part_number = 0;
    std::uint64_t offset = 0; ///< within the object
    std::uint64_t size = 0;
    std::string checksum; ///< base64 in the object's algorithm, or empty
};

/// An object version with its segments, ready to be read.
struct object_handle
{
    object_version version;
    std::vector<segment> segments;
    /// The SSE-C key the request presented, checked against version.sse_key_check by the caller: what
    /// read() decrypts customer-sealed segments with. Never stored.
    std::string customer_key;
};

class object_service
{
public:
    /// All must outlive the service. `cache` (optional) learns of versioning changes made here.
    object_service(pg::pool& pool, storage::blob_store& store, lookup_cache* cache = nullptr)
        : pool_(pool), store_(store), cache_(cache)
    {}

    /// The SSE master key (32 raw bytes) that SSE-S3 writes seal under and reads unseal with; empty (the
    /// default) = none configured: SSE-S3 writes and reads answer NotImplemented. Set before serving.
    void set_sse_master_key(std::string key) { sse_master_key_ = std::move(key); }
    bool has_sse_master_key() const noexcept { return !sse_master_key_.empty(); }
    const std::string& sse_master_key() const noexcept { return sse_master_key_; }

    /// Streams the body into a blob and publishes it as the key's current version.
    /// Errors: bad_digest (Content-MD5), content_sha256_mismatch, incomplete_body (length mismatch),
    /// entity_too_large, no_such_bucket (bucket deleted meanwhile), storage errors.
    asio::awaitable<result<object_version>> put_object(const audit_context& who, put_object_request request);

    /// The current version of a key with its segments; no_such_key when absent or a delete marker.
    asio::awaitable<result<object_handle>> open_object(std::int64_t bucket_id, std::string_view key);

    /// A version of a key: the current one without `version_id` (no_such_key when the key has none), else
    /// the named one (no_such_version when it does not exist). Unlike open_object, a delete marker is
    /// returned (version.is_delete_marker) so that the caller can answer as S3 does (404 or 405 with
    /// x-amz-delete-marker). Precondition: `version_id` is valid (is_valid_version_id).
    asio::awaitable<result<object_handle>> open_version(std::int64_t bucket_id, std::string_view key,
                                                        const std::optional<std::string>& version_id);

    /// The version of a key that was current at commit sequence number `as_of` (a snapshot), if it was an
    /// object then; no_such_key otherwise.
    asio::awaitable<result<object_handle>> open_as_of(std::int64_t bucket_id, std::string_view key,
                                                      std::int64_t as_of);

    /// The parts of a multipart object version, by part number (empty for single-part objects).
    asio::awaitable<std::vector<object_part_info>> parts(std::int64_t version_row);

    /// A byte source over `[offset, offset + length)` of an opened object. The handle must outlive it.
    std::unique_ptr<byte_source> read(const object_handle& handle, std::uint64_t offset,
                                      std::uint64_t length);

    /// As read(), but the first bytes are read before it returns, so that a blob store that cannot serve
    /// them (unavailable, missing blob) is reported as an error before any response header goes out rather
    /// than as a body cut short.
    asio::awaitable<result<std::unique_ptr<byte_source>>>
    read_started(const object_handle& handle, std::uint64_t offset, std::uint64_t length);

    /// Publishes a new version of the target that references the source's segments (no bytes move).
    /// Errors: no_such_key when the source changed or vanished since it was opened (precondition_failed
    /// would be wrong: the caller re-opens and retries or reports NoSuchKey).
    asio::awaitable<result<object_version>> copy_object(const audit_context& who,
                                                        copy_object_request request);

    /// PutObjectTagging / DeleteObjectTagging (an empty set): replaces the tag set of `version` (as opened by
    /// open_version), in place: no new version, content and digests unchanged. Audited as object.tagging.
    /// Precondition: `tags` passed s3::check_tag_set. Errors: no_such_version when the version was deleted
    /// meanwhile (or is a delete marker).
    asio::awaitable<result<void>> set_tags(const audit_context& who, const object_version& version,
                                           std::vector<s3::tag> tags);

    /// PutObjectRetention on `version` (as opened by open_version; not a delete marker), under its row lock:
    /// nullopt removes the retention. While a retention holds, COMPLIANCE can only be extended (same mode,
    /// a later or equal date) and GOVERNANCE only with `bypass_governance` (auth allowed it) unless extended;
    /// otherwise access_denied and nothing changes. Audited as object.retention (with "bypass" when used).
    /// Errors: no_such_version when the version was deleted meanwhile.
    asio::awaitable<result<void>> set_retention(const audit_context& who, const object_version& version,
                                                std::optional<s3::retention> retention,
                                                bool bypass_governance);

    /// PutObjectLegalHold on `version`: ON or OFF, whatever the retention. Audited as object.legal_hold.
    /// Errors: no_such_version when the version was deleted meanwhile.
    asio::awaitable<result<void>> set_legal_hold(const audit_context& who, const object_version& version,
                                                 bool on);

    /// GetObjectAcl: the stored grants (s3::stored_acl) of the version row `version_row`; "" when it has the
    /// default ACL (the owner's FULL_CONTROL alone).
    asio::awaitable<std::string> acl(std::int64_t version_row);

    /// PutObjectAcl: sets the ACL of `version` ("" restores the default), audited as object.acl. Errors:
    /// no_such_version when the version is gone (or is a delete marker).
    asio::awaitable<result<void>> set_acl(const audit_context& who, const object_version& version,
                                          std::string stored);

    /// Deletes the current version of a key. Deleting a missing key succeeds (S3 semantics).
    asio::awaitable<result<void>> delete_object(const audit_context& who, std::int64_t bucket_id,
                                                std::string_view key);

    /// DeleteObject with versioning: see delete_request. Deleting a version permanently drops its blob
    /// references; when it was the current version, the newest remaining one becomes current. A missing
    /// key or version succeeds, as in S3. Errors: no_such_bucket.
    asio::awaitable<result<delete_outcome>> remove(const audit_context& who, delete_request request);

    /// PutBucketVersioning: enabled or suspended (a bucket never goes back to unversioned). Waits for
    /// writes in flight on the bucket. Errors: no_such_bucket, invalid_argument for unversioned.
    asio::awaitable<result<void>> set_versioning(const audit_context& who, std::int64_t bucket_id,
                                                 versioning_mode mode);

    /// One page of ListObjectVersions: every version and delete marker by key (UTF-8 byte order), newest
    /// first, folded into common prefixes at `delimiter`; index range scans, O(page size).
    asio::awaitable<result<versions_page>> list_versions(list_versions_request request);

    /// One page of current keys (or of the keys as of `as_of`) in UTF-8 byte order, folding keys into common
    /// prefixes at `delimiter`.
    asio::awaitable<result<list_page>> list(list_request request);

private:
    pg::pool& pool_;
    storage::blob_store& store_;
    lookup_cache* cache_;
    std::string sse_master_key_;
};

} // namespace depot::registry
