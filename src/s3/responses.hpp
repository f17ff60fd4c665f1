#pragma once
/// \file
/// Builders for S3 response bodies from plain structs. Every builder returns a complete XML document
/// whose root carries the S3 namespace. ETags are given bare and written quoted (except in
/// GetObjectAttributes, where S3 writes them bare); times are written as ISO 8601 with milliseconds.
/// With `url_encoding` (the request had encoding-type=url), the key-valued elements S3 encodes are
/// percent-encoded ('/' kept) and EncodingType is echoed; opaque tokens and version ids never are.

#include "s3/types.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::s3 {

// ---- buckets -------------------------------------------------------------------------------------------

struct bucket_entry
{
    std::string name;
    time_point creation_date{};
    std::string region{}; ///< BucketRegion; empty to omit
};

struct list_buckets_result
{
    s3::owner owner{};
    std::vector<bucket_entry> buckets{};
    std::string continuation_token{}; ///< empty to omit
    std::string prefix{};             ///< empty to omit
};

/// ListBuckets: ListAllMyBucketsResult.
std::string list_buckets_xml(const list_buckets_result& result);

/// GetBucketLocation: the region, or an empty LocationConstraint for us-east-1 (and for "").
std::string location_constraint_xml(std::string_view region);

/// GetBucketVersioning: no Status for a bucket that was never versioned.
std::string versioning_configuration_xml(versioning_status status);

// ---- object listings -----------------------------------------------------------------------------------

/// One object of a ListObjects/ListObjectsV2 page.
struct object_entry
{
    std::string key;
    time_point last_modified{};
    std::string etag{}; ///< bare
    std::uint64_t size = 0;
    std::string storage_class = "STANDARD";
    s3::owner owner{};                ///< written by v1 always, by v2 with fetch-owner
    std::string checksum_algorithm{}; ///< e.g. "CRC64NVME"; empty to omit
    std::string checksum_type{};      ///< "FULL_OBJECT" or "COMPOSITE"; empty to omit
};

/// ListObjects (version 1): ListBucketResult.
struct list_objects_result
{
    std::string bucket;
    std::string prefix{};
    std::string delimiter{};
    std::string marker{};
    std::size_t max_keys = 1000;
    bool url_encoding = false;
    bool is_truncated = false;
    std::string next_marker{}; ///< written only with a delimiter on a truncated page, as S3
    std::vector<object_entry> contents{};
    std::vector<std::string> common_prefixes{};
};
std::string list_objects_xml(const list_objects_result& result);

/// ListObjectsV2: ListBucketResult with KeyCount and continuation tokens.
struct list_objects_v2_result
{
    std::string bucket;
    std::string prefix{};
    std::string delimiter{};
    std::size_t max_keys = 1000;
    bool url_encoding = false;
    bool is_truncated = false;
    std::optional<std::string> continuation_token{}; ///< echoed when the request had one
    std::string next_continuation_token{};           ///< written when truncated
    std::optional<std::string> start_after{};        ///< echoed when the request had one
    bool fetch_owner = false;
    std::vector<object_entry> contents{};
    std::vector<std::string> common_prefixes{};
};
std::string list_objects_v2_xml(const list_objects_v2_result& result);

/// One version or delete marker of ListObjectVersions.
struct version_entry
{
    std::string key;
    std::string version_id{}; ///< empty for an unversioned object, written as "null"
    bool is_latest = false;
    bool is_delete_marker = false;
    time_point last_modified{};
    std::string etag{}; ///< bare; not written for delete markers
    std::uint64_t size = 0;
    std::string storage_class = "STANDARD";
    s3::owner owner{};
    std::string checksum_algorithm{};
    std::string checksum_type{};
};

/// ListObjectVersions: ListVersionsResult. Entries are written in the given order (key, then newest first).
struct list_versions_result
{
    std::string bucket;
    std::string prefix{};
    std::string delimiter{};
    std::string key_marker{};
    std::string version_id_marker{};
    std::size_t max_keys = 1000;
    bool url_encoding = false;
    bool is_truncated = false;
    std::string next_key_marker{};        ///< written when truncated
    std::string next_version_id_marker{}; ///< written when truncated
    std::vector<version_entry> entries{};
    std::vector<std::string> common_prefixes{};
};
std::string list_versions_xml(const list_versions_result& result);

// ---- objects -------------------------------------------------------------------------------------------

/// CopyObject's CopyObjectResult and UploadPartCopy's CopyPartResult.
struct copy_result
{
    std::string etag; ///< bare
    time_point last_modified{};
    checksums checksum{};
};
std::string copy_object_result_xml(const copy_result& result);

/// POST Object's answer to success_action_status 201: PostResponse with Location, Bucket, Key and the quoted
/// ETag.
std::string post_response_xml(std::string_view location, std::string_view bucket, std::string_view key,
                              std::string_view quoted_etag);
std::string copy_part_result_xml(const copy_result& result);

struct deleted_entry
{
    std::string key;
    std::string version_id{}; ///< empty to omit
    bool delete_marker = false;
    std::string delete_marker_version_id{}; ///< empty to omit
};

struct delete_error_entry
{
    std::string key;
    std::string version_id{}; ///< empty to omit
    std::string code;         ///< S3 code, e.g. from `lookup(errc).code`
    std::string message;
};

/// DeleteObjects: DeleteResult. Quiet mode lists only the errors.
struct delete_result
{
    bool quiet = false;
    std::vector<deleted_entry> deleted{};
    std::vector<delete_error_entry> errors{};
};
std::string delete_result_xml(const delete_result& result);

/// One part in GetObjectAttributes' ObjectParts.
struct object_part
{
    int part_number = 0;
    std::uint64_t size = 0;
    checksums checksum{};
};

struct object_parts
{
    int total_parts_count = 0;
    int part_number_marker = 0;
    int next_part_number_marker = 0;
    int max_parts = 1000;
    bool is_truncated = false;
    std::vector<object_part> parts{};
};

/// GetObjectAttributes: only the requested attributes are set and written.
struct object_attributes
{
    std::optional<std::string> etag{}; ///< bare, and written bare as S3 does here
    std::optional<checksums> checksum{};
    std::optional<object_parts> parts{};
    std::optional<std::string> storage_class{};
    std::optional<std::uint64_t> object_size{};
};
std::string object_attributes_xml(const object_attributes& attributes);

/// GetObjectTagging / GetBucketTagging: Tagging with a TagSet.
std::string tagging_xml(const std::vector<tag>& tags);

// ---- multipart uploads ---------------------------------------------------------------------------------

struct initiate_multipart_result
{
    std::string bucket;
    std::string key;
    std::string upload_id;
};
std::string initiate_multipart_upload_xml(const initiate_multipart_result& result);

struct complete_multipart_result
{
    std::string location; ///< the object's URL
    std::string bucket;
    std::string key;
    std::string etag; ///< bare, e.g. "…-3"
    checksums checksum{};
};
std::string complete_multipart_upload_xml(const complete_multipart_result& result);

struct part_entry
{
    int part_number = 0;
    time_point last_modified{};
    std::string etag{}; ///< bare
    std::uint64_t size = 0;
    checksums checksum{}; ///< ChecksumType is not written per part
};

/// ListParts: ListPartsResult.
struct list_parts_result
{
    std::string bucket;
    std::string key;
    std::string upload_id;
    s3::owner initiator{};
    s3::owner owner{};
    std::string storage_class = "STANDARD";
    int part_number_marker = 0;
    int next_part_number_marker = 0;
    int max_parts = 1000;
    bool is_truncated = false;
    std::string checksum_algorithm{}; ///< empty to omit
    std::string checksum_type{};      ///< empty to omit
    std::vector<part_entry> parts{};
};
std::string list_parts_xml(const list_parts_result& result);

struct upload_entry
{
    std::string key;
    std::string upload_id;
    s3::owner initiator{};
    s3::owner owner{};
    std::string storage_class = "STANDARD";
    time_point initiated{};
    std::string checksum_algorithm{}; ///< empty to omit
    std::string checksum_type{};      ///< COMPOSITE / FULL_OBJECT; empty to omit
};

/// ListMultipartUploads: ListMultipartUploadsResult.
struct list_uploads_result
{
    std::string bucket;
    std::string prefix{};
    std::string delimiter{};
    std::string key_marker{};
    std::string upload_id_marker{};
    std::string next_key_marker{};
    std::string next_upload_id_marker{};
    std::size_t max_uploads = 1000;
    bool url_encoding = false;
    bool is_truncated = false;
    std::vector<upload_entry> uploads{};
    std::vector<std::string> common_prefixes{};
};
std::string list_uploads_xml(const list_uploads_result& result);

} // namespace depot::s3
