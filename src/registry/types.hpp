#pragma once
/// \file
/// Plain records of the registry. No behaviour; repositories fill them from rows.

#include "common/checksum.hpp"
#include "s3/object_lock.hpp"
#include "s3/types.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace depot::auth {
struct bucket_policy;
}

namespace depot::registry {

/// Who performs an operation, as its audit row records it (registry/repo/audit.hpp): made once per request
/// when it is authenticated and passed explicitly to every service operation that changes state.
struct audit_context
{
    std::string actor;      ///< user id
    std::string credential; ///< access key id or "token:<id>", never a secret
    std::string request_id;
    std::string client_addr;
};

/// A refusal's audit row (outcome "denied"), as the refused request names it.
struct denial
{
    std::string action;   ///< "s3.GetObject", "api.getBucket", "hf.resolve"
    std::string resource; ///< what the request addressed ("bucket/key" on S3)
    std::string team;     ///< the row's team: its admins read it ("" for none)
    std::string bucket;   ///< details.bucket ("" for none)
    /// The key of `bucket` the refusal was aimed at ("" for none): with no team, the row is the team's whose
    /// model holds it (the longest prefix), details.model "team/model".
    std::string key;
    std::string copy_source; ///< details.copy_source: the "bucket/key" a copy was refused
    std::string reason;      ///< details.reason
};

using time_point = std::chrono::system_clock::time_point;

/// A query of the audit log (REST GET /api/v1/audit): every filter optional, rows in chain order.
struct audit_query
{
    std::string since; ///< ISO 8601; rows at or after
    std::string until; ///< ISO 8601; rows before
    std::string actor;
    std::string team;
    std::string action;   ///< exact, or a prefix ending in '.' ("model." matches every model action)
    std::string resource; ///< a prefix of the resource
    std::int64_t after_id = 0;
    std::size_t limit = 100;
    /// Who asks: an installation admin sees every row, anyone else the rows of the teams they administer.
    std::string viewer;
    bool viewer_is_admin = false;
};

/// The result of checking the chain.
struct audit_verification
{
    std::int64_t rows = 0;               ///< sealed rows checked
    std::int64_t unsealed = 0;           ///< the newest rows, not linked into the chain yet
    std::int64_t anchor_id = 0;          ///< rows up to this one were archived
    std::optional<std::int64_t> bad_row; ///< the first row whose hash or link does not hold
    std::string problem;                 ///< what is wrong (empty when the chain holds)
};

struct user
{
    std::string id;
    std::string display_name;
    std::string email;
    bool is_admin = false;
    time_point created_at;
};

struct access_key
{
    std::string access_key_id;
    std::string user_id;
    std::string user_display_name;
    std::string secret; ///< plain secret, unsealed with the server key; never logged
    time_point created_at;
    std::optional<time_point> expires_at;
    std::optional<time_point> revoked_at;
    /// The key's scope (schema/0008_audit.sql) as a JSON object; empty = not narrowed.
    std::string scope;
    /// Whether the key's user is an installation admin (set by find_active_key only).
    bool user_is_admin = false;
};

/// An API token (registry/service/credentials.hpp): a bearer credential for the REST API.
struct api_token
{
    std::string id;
    std::string user_id;
    std::string user_display_name;
    std::string name;
    time_point created_at;
    std::optional<time_point> expires_at;
    std::optional<time_point> revoked_at;
    /// The token's scope as a JSON object; empty = not narrowed.
    std::string scope;
    /// Whether the token's user is an installation admin.
    bool user_is_admin = false;
    /// The whole token; set only by create().
    std::string token;
};

/// A console session (registry/service/credentials.hpp).
struct console_session
{
    std::string id;
    std::string user_id;
    std::string user_display_name;
    bool user_is_admin = false;
    /// The credential the session was opened with: an access key id, or "token:<id>".
    std::string credential;
    /// That credential's scope (a JSON object); empty = not narrowed.
    std::string scope;
    /// Sent back in the X-Depot-CSRF header of every request that changes something.
    std::string csrf_token;
    time_point created_at;
    time_point expires_at;
    /// The whole cookie value; set only by create().
    std::string cookie;
};

struct bucket
{
    std::int64_t id = 0;
    std::string name;
    std::string owner_id;
    std::string owner_display_name;
    std::string region;
    std::string versioning; ///< "unversioned", "enabled" or "suspended"
    time_point created_at;
    bool dedup = true; ///< new content is deduplicated against stored blobs
    /// object.created / object.deleted events are emitted for the bucket's writes (opt-in: high volume).
    bool object_events = false;
    /// Some model lives in the bucket (as read with the bucket): its downloads may be model downloads.
    bool has_models = false;
    /// The CORS configuration as GetBucketCors returns it (s3/cors.hpp); empty when there is none.
    std::string cors;
    /// The bucket's tag set (PutBucketTagging); nullopt when it has none (GetBucketTagging: NoSuchTagSet).
    std::optional<std::vector<s3::tag>> tags;
    /// Object Lock is on (schema/0024_object_lock.sql): versioning stays Enabled, versions can be locked.
    bool object_lock = false;
    /// The retention new versions get when they name none (only with object_lock).
    std::optional<s3::default_retention> lock_default;
    /// Access control (schema 0023): the bucket's ACL grants in their stored form (s3::stored_acl; empty:
    /// the owner's FULL_CONTROL alone), its PublicAccessBlock flags ("" when it has none, else four '0'/'1':
    /// BlockPublicAcls, IgnorePublicAcls, BlockPublicPolicy, RestrictPublicBuckets) and its object
    /// ownership ("" when its ownership controls were deleted: ObjectWriter's behaviour).
    std::string acl;
    std::string public_access_block;
    std::string object_ownership = "BucketOwnerEnforced";
    /// Default encryption (PutBucketEncryption): "AES256", or empty for none.
    std::string encryption;
    /// The bucket policy (schema 0026): the document as PutBucketPolicy stored it (empty: none), and parsed
    /// when the row is read (nullptr: none). A stored document that no longer parses reads as a policy
    /// denying everything (only the owner's policy operations remain): it fails closed.
    std::string policy;
    std::shared_ptr<const auth::bucket_policy> parsed_policy;
};

/// A bucket's access control settings (schema 0023), each changed with an audit action of its own: the
/// ACL's stored grants (bucket.acl), the PublicAccessBlock flags (bucket.public_access_block), the object
/// ownership (bucket.ownership_controls).
enum class bucket_access_setting
{
    acl,
    public_access_block,
    object_ownership,
};

/// What the installation stores: logical bytes (current object versions, delete markers excepted) and
/// physical bytes (stored blobs, each identical content once).
struct stored_totals
{
    std::int64_t logical = 0;
    std::int64_t physical = 0;
};

/// Stored content (registry/service/catalog.hpp): a whole-object digest a caller holds, where to copy such
/// content from, and space used.
struct content_match
{
    std::string sha256; ///< raw
    std::uint64_t size = 0;
};

/// An object version with a given content, to copy references from.
struct content_source
{
    std::string bucket;
    std::string key;
    std::string version_id;
    std::int64_t version_row = 0;
};

struct usage
{
    std::int64_t buckets = 0;
    std::int64_t objects = 0;        ///< current versions that are not delete markers
    std::int64_t versions = 0;       ///< every stored version, delete markers excluded
    std::int64_t logical_bytes = 0;  ///< sum of the stored versions' sizes
    std::int64_t physical_bytes = 0; ///< sum of the sizes of the distinct blobs they reference
};

/// Standard HTTP headers S3 stores with an object and returns on GET/HEAD.
struct object_headers
{
    std::optional<std::string> content_type;
    std::optional<std::string> content_encoding;
    std::optional<std::string> content_disposition;
    std::optional<std::string> content_language;
    std::optional<std::string> cache_control;
    std::optional<std::string> expires;
    /// x-amz-meta-* with the prefix removed, names lower-cased, in order.
    std::vector<std::pair<std::string, std::string>> user_metadata;
};

/// How a blob's bytes are stored (blobs.sealed, schema 0025): plaintext, or in the sealed format
/// (storage/sealed) with the data key wrapped by the server's SSE master key (SSE-S3) or by the customer's
/// key (SSE-C).
enum class sealing : std::uint8_t
{
    none,
    master,
    customer
};

/// A piece of an object: `length` bytes of blob `store_id` starting at `offset` (plaintext offsets).
struct segment
{
    std::int64_t blob_row = 0;
    std::string store_id;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    /// The multipart part this piece belongs to (0 for objects written in one piece).
    int part_number = 0;
    sealing sealed = sealing::none;
};

struct object_version
{
    std::int64_t row_id = 0;
    std::int64_t bucket_id = 0;
    std::string key;
    std::string version_id;
    bool is_delete_marker = false;
    std::uint64_t size = 0;
    std::string etag;   ///< without quotes
    std::string sha256; ///< raw 32 bytes, or empty when unknown
    std::string owner_id;
    std::string owner_display_name;
    time_point last_modified;
    object_headers headers;
    std::optional<int> parts_count;
    /// Flexible checksum: algorithm ("CRC64NVME", ...), type ("FULL_OBJECT"/"COMPOSITE") and the value as
    /// S3 reports it (base64, with "-N" for composite). Empty when unknown.
    std::string checksum_algorithm;
    std::string checksum_type;
    std::string checksum_value;
    /// The version's tag set (object tagging), in the order it was given. Not content: changing it changes
    /// neither the version nor its digests.
    std::vector<s3::tag> tags;
    /// Object Lock: the version's retention (it may have passed) and legal hold (nullopt: never set).
    /// Writes set them from the request; the bucket's default retention applies at insert when `retention`
    /// is nullopt.
    std::optional<s3::retention> retention;
    std::optional<bool> legal_hold;
    /// Server-side encryption as S3 reports it: "AES256" (SSE-S3), "SSE-C", or empty. For SSE-C,
    /// `sse_key_check` is the salted HMAC of the customer's key (sse_key_check in registry/service/sse.hpp).
    std::string sse;
    std::string sse_key_check;
};

/// Filtered model lists (registry/service/models.hpp).
/// A version label (the `labels` object of a version): key and value, compared as text (a number 5 matches
/// "5").
struct label_match
{
    std::string key;
    std::string value;
};

struct model_filter
{
    /// Part of the model's name (case-insensitive); empty = any.
    std::string name_contains;
    /// Some version of the model carries this label.
    std::optional<label_match> label;
};

/// The key tree of the S3 models view (registry/service/models.hpp).
/// A team or a model: a directory level of the view.
struct view_node
{
    std::int64_t id = 0;
    std::string name;
};

/// A ref of a model: a version number, a version label, or an alias of a version that is not archived.
/// When names collide, the ref resolves as the view reads it: number, then label, then alias.
struct view_ref
{
    std::string name;
    std::int64_t version_id = 0;
    std::string created_by; ///< of the version
    time_point created_at;  ///< of the version
};

/// Where a page of one level starts: segments (name + "/") after `bound`, or from it when `inclusive`.
struct view_cursor
{
    std::string bound;
    bool inclusive = true;
};

/// A multipart upload and its parts (registry/service/multipart_service.hpp).
struct multipart_upload
{
    std::int64_t row = 0;
    std::string upload_id;
    std::int64_t bucket_id = 0;
    std::string key;
    std::string owner_id;
    std::string owner_display_name;
    time_point initiated;
    object_headers headers;
    /// The flexible checksum declared at creation (x-amz-checksum-algorithm / -type), if any.
    std::optional<checksum_algorithm> algorithm;
    checksum_type type = checksum_type::full_object;
    /// x-amz-tagging of the creation: the completed object's tag set.
    std::vector<s3::tag> tags;
    /// The lock headers of the creation: the completed object's retention and legal hold.
    std::optional<s3::retention> retention;
    std::optional<bool> legal_hold;
    /// Server-side encryption of the upload (its parts and the completed object): "AES256", "SSE-C" or
    /// empty; for SSE-C the key check every part's key must match (registry/service/sse.hpp).
    std::string sse;
    std::string sse_key_check;
    /// The ACL of the creation (x-amz-acl, x-amz-grant-*) in its stored form (s3::stored_acl): the completed
    /// object's ACL; empty for the default (the owner's FULL_CONTROL alone).
    std::string acl;
};

struct part_info
{
    int part_number = 0;
    std::uint64_t size = 0;
    std::string etag; ///< bare hex MD5 of the part's bytes
    time_point last_modified;
    std::string checksum; ///< base64, in the upload's algorithm (empty when the upload has none)
};

/// A snapshot of a bucket (registry/service/snapshot_service.hpp).
struct snapshot
{
    std::int64_t id = 0;
    std::int64_t bucket_id = 0;
    std::string name;
    std::string prefix; ///< "" = the whole bucket
    std::int64_t seq = 0;
    std::string created_by;
    time_point created_at;
};

} // namespace depot::registry
