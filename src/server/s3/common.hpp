#pragma once
/// \file
/// Steps shared by S3 operations: authorization of bucket access, request metadata parsing, response
/// headers of an object, and reading small (XML) request bodies with their integrity checks.

#include "common/checksum.hpp"
#include "registry/types.hpp"
#include "s3/types.hpp"
#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <functional>

namespace depot::server::s3op {

namespace asio = boost::asio;

/// A copy's source bucket (CopyObject, UploadPartCopy), read: the owner, an installation admin or the
/// bucket's READ grant, and the bucket's policy asked for s3:GetObject (s3:GetObjectVersion when the source
/// names a version, `version_id`, which is then the policy's s3:VersionId) on `key`, so an explicit Deny
/// there holds for copies too. The source object's ACL is not read. A refusal's audit row names the source
/// (note_refusal), the team of a model holding it.
asio::awaitable<result<registry::bucket>>
authorized_source_bucket(request_context& ctx, std::string_view name, std::string_view key,
                         std::optional<std::string_view> version_id);

/// Validates ctx.key as an S3 object key (invalid_object_name / KeyTooLongError).
result<void> check_key(std::string_view key);

/// Content-Type, Content-Encoding, ..., Expires and x-amz-meta-* of the request.
/// Errors: metadata too large.
result<registry::object_headers> object_headers_of(const request_context& ctx);

/// Sets ETag, Last-Modified, Content-Type, the other stored headers and x-amz-meta-* on a response.
void set_object_headers(response& res, const registry::object_version& v);

/// Content-MD5 as raw bytes (empty when absent); invalid_digest when malformed.
result<std::string> content_md5_of(const request_context& ctx);

/// Reads a whole small body (XML documents) up to `limit` bytes, verifying Content-MD5 and a signed
/// payload hash. Errors: too_large (S3's MaxMessageLengthExceeded, decided from Content-Length before
/// reading when it is declared), bad_digest, content_sha256_mismatch, incomplete_body.
asio::awaitable<result<std::string>> read_small_body(request_context& ctx, std::size_t limit);

/// The flexible checksum a request asserts: a header x-amz-checksum-<alg>, or a trailer announced in
/// x-amz-trailer (aws-chunked), or only an algorithm (x-amz-sdk-checksum-algorithm).
struct checksum_request
{
    std::optional<checksum_algorithm> algorithm;
    std::optional<std::string> value;
    /// Reads the trailer's value once the body has ended.
    std::function<std::optional<std::string>()> trailer;
};

/// Errors: invalid_request for several checksum headers or an unknown algorithm.
result<checksum_request> checksum_request_of(request_context& ctx);

/// x-amz-checksum-<alg> and x-amz-checksum-type response headers of a stored checksum.
void set_checksum_headers(response& res, std::string_view algorithm, std::string_view type,
                          std::string_view value);

/// Fills the s3::checksums field matching `algorithm` (for XML bodies).
void set_xml_checksum(s3::checksums& out, std::string_view algorithm, std::string_view type,
                      std::string value);

struct copy_source
{
    std::string bucket;
    std::string key;
    std::optional<std::string> version_id;
};

/// Parses x-amz-copy-source: "bucket/key" or "/bucket/key", percent-encoded, optionally "?versionId=v".
result<copy_source> parse_copy_source(std::string_view raw);

/// The partNumber query parameter: 1..10000 (invalid_argument otherwise).
result<int> part_number_of(const request_context& ctx);

/// An integer parameter or header in [min, max]; `fallback` when absent; invalid_argument naming it
/// otherwise.
result<int> integer_of(std::optional<std::string_view> value, std::string_view name, int fallback, int min,
                       int max);

/// x-amz-tagging of a write (PutObject, CreateMultipartUpload, CopyObject with REPLACE): the tag set, empty
/// when the header is absent. Errors: invalid_argument, invalid_tag (s3::parse_tagging_header).
result<std::vector<s3::tag>> tagging_header_of(const request_context& ctx);

/// PutObjectTagging and DeleteObjectTagging (an empty set) once the set is valid: the version ctx.key and
/// `version_id` name gets `tags`; S3's answers for a missing key or version and for delete markers. The
/// response has status `success` and x-amz-version-id.
asio::awaitable<result<response>> set_object_tags(request_context& ctx, const registry::bucket& bucket,
                                                  const std::optional<std::string>& version_id,
                                                  std::vector<s3::tag> tags, http::status success);

/// Access control headers (x-amz-acl, x-amz-grant-*) of a write, before its body is read: invalid ones are
/// refused (s3op::acl_headers_of); an ACL beyond the owners' on an operation that does not store ACLs
/// answers not_implemented rather than being dropped. The operations that store them (CreateBucket,
/// PutObject, CopyObject, CreateMultipartUpload, Put*Acl) check the rest themselves.
result<void> check_acl_headers(const request_context& ctx, std::string_view operation);

/// If-Match and If-None-Match of a write that publishes a key (PutObject, CopyObject,
/// CompleteMultipartUpload), as the request sent them: the registry evaluates them against the key's current
/// version under its row lock, atomically with the publish (check_write_conditions, one evaluation for every
/// such write). A precondition is never ignored.
struct write_condition_headers
{
    std::optional<std::string> if_match;
    std::optional<std::string> if_none_match;
};
write_condition_headers write_conditions_of(const request_context& ctx);

/// x-amz-copy-source-if-* against the source version (precondition_failed when one does not hold).
result<void> check_copy_source_conditions(const request_context& ctx, const registry::object_version& source);

} // namespace depot::server::s3op
