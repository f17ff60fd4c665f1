#pragma once
/// \file
/// S3's server-side encryption vocabulary without I/O: the request headers of SSE-S3
/// (x-amz-server-side-encryption) and SSE-C (x-amz-server-side-encryption-customer-*, and their
/// x-amz-copy-source- forms), with S3's refusals, and the bucket encryption configuration document
/// (PutBucketEncryption / GetBucketEncryption).

#include "common/result.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace depot::s3 {

/// Looks a request header up by lower-case name.
using header_lookup = std::function<std::optional<std::string_view>(std::string_view)>;

/// What the headers of one request ask for.
struct sse_headers
{
    /// x-amz-server-side-encryption: AES256 (SSE-S3).
    bool sse_s3 = false;
    /// SSE-C: the customer's 32 raw key bytes (empty when none was given) and its base64 MD5, as S3 echoes
    /// it in x-amz-server-side-encryption-customer-key-MD5.
    std::string customer_key;
    std::string customer_key_md5;
};

/// The SSE headers of a request. `prefix` is "x-amz-" for the request's own object and
/// "x-amz-copy-source-" for a copy source (which has no SSE-S3 header). S3's errors: invalid_argument for
/// an unknown x-amz-server-side-encryption value, an algorithm other than AES256, a missing or malformed
/// key or key MD5, an MD5 that does not match, or SSE-S3 and SSE-C together; not_implemented for aws:kms
/// and aws:kms:dsse (no KMS) and the KMS headers.
result<sse_headers> parse_sse_headers(const header_lookup& get, std::string_view prefix = "x-amz-");

/// A PutBucketEncryption document: validated (one Rule with ApplyServerSideEncryptionByDefault whose
/// SSEAlgorithm is AES256; aws:kms and aws:kms:dsse are not_implemented; BucketKeyEnabled is accepted and
/// has no effect). Returns the algorithm ("AES256"). Errors: malformed_xml, invalid_argument,
/// not_implemented.
result<std::string> parse_bucket_encryption(std::string_view body);

/// The ServerSideEncryptionConfiguration document GetBucketEncryption returns for `algorithm`.
std::string bucket_encryption_xml(std::string_view algorithm);

} // namespace depot::s3
