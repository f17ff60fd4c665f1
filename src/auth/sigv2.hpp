#pragma once
/// \file
/// AWS Signature Version 2 as S3 documents it ("Signing and authenticating REST requests"), for the clients
/// that still default to it: boto3's `generate_presigned_url` against a custom endpoint in us-east-1
/// (`AWSAccessKeyId`, `Signature`, `Expires` query parameters) and s3cmd or older SDKs (the
/// `Authorization: AWS <key>:<signature>` header).
///
/// The string to sign is
///     VERB \n Content-MD5 \n Content-Type \n Date \n CanonicalizedAmzHeaders CanonicalizedResource
/// where Date is the Expires value on a presigned request and empty when x-amz-date is sent; every x-amz-*
/// header of the request is in CanonicalizedAmzHeaders by construction (lower-case name, values of repeated
/// headers joined by ',', each line ending in '\n', sorted by name), so no x-amz-* header goes unsigned.
/// The signature is base64(HMAC-SHA1(secret, string to sign)). The body is never signed by SigV2 (only a
/// Content-MD5 header the client chose to send is).
///
/// Same pattern as sigv4.hpp: `parse` extracts and validates, the caller looks the secret up by
/// `access_key_id`, `verify` checks time and signature. Pure and thread-safe.

#include "auth/sigv4.hpp"
#include "common/result.hpp"

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace depot::auth::sigv2 {

/// True when the request carries Signature Version 2 credentials: an Authorization header "AWS ..." (the
/// scheme word exactly "AWS") or an `AWSAccessKeyId` or `Signature` query parameter. Such requests go to
/// `parse` below, every other one to sigv4's `parse`.
bool applies(const request_view& req);

/// The authentication data of a SigV2 request.
struct parsed_auth
{
    bool presigned = false;
    std::string access_key_id;
    std::string signature; ///< the raw 20 bytes (decoded from base64)
    /// Header authentication: the time of the x-amz-date header, or of Date without it.
    std::chrono::system_clock::time_point request_time;
    /// Presigned: the Expires value (seconds since the epoch), and its decimal form as signed.
    long long expires_epoch = 0;
    std::string expires_text;
};

/// Extracts and validates the authentication data, without checking the signature or the time.
/// Errors, as S3 answers them:
/// - invalid_argument "AWS authorization header is invalid.  Expected AwsAccessKeyId:signature"
///   (argument Authorization): the header has no ':', an empty or non-printable key id, or a signature that
///   is not the base64 of 20 bytes;
/// - invalid_argument "Only one auth mechanism allowed ...": an Authorization header and presigned query
///   parameters (of either version) together; authorization_header_malformed: the header twice;
/// - access_denied "Query-string authentication requires the Signature, Expires and AWSAccessKeyId
///   parameters": one of the three missing; authorization_query_parameters_error: one repeated, a key id
///   that is not printable ASCII, or a signature that is not the base64 of 20 bytes;
/// - access_denied "Invalid date (should be seconds since epoch): ..." for an Expires that is not a decimal
///   number of seconds;
/// - authorization_query_parameters_error: a presigned request carrying a query parameter its signature does
///   not cover (anything but the three above, the sub-resources, and x-amz-*, content-type and content-md5
///   without a header of that name), e.g. a listing's prefix: its holder could change it unnoticed;
/// - access_denied "AWS authentication requires a valid Date or x-amz-date header" (header authentication);
/// - invalid_argument: a malformed percent-escape in the target, or an x-amz-content-sha256 value that is
///   neither UNSIGNED-PAYLOAD nor 64 hex digits (the streaming modes need SigV4's chunk signatures).
result<parsed_auth> parse(const request_view& req);

/// The sub-resources that belong to the CanonicalizedResource, sorted: AWS's documented list (acl,
/// lifecycle, location, logging, notification, partNumber, policy, requestPayment, torrent, uploadId,
/// uploads, versionId, versioning, versions, website, delete and the response-* overrides) and the newer
/// ones the SDKs sign (cors, tagging, object-lock, retention, legal-hold, ...).
std::span<const std::string_view> subresources();

/// The string to sign of `req` (see the file comment). `virtual_host_bucket` is the bucket named by the
/// Host header of a virtual-hosted-style request ("/bucket" is prepended to the path), empty otherwise. On a
/// presigned request, Content-Type, Content-MD5 and x-amz-* values may also come from query parameters of the
/// same (lower-case) name, as boto3 puts them there; a header of the same name wins.
std::string string_to_sign(const request_view& req, const parsed_auth& auth,
                           std::string_view virtual_host_bucket);

/// base64(HMAC-SHA1(secret, string_to_sign)).
std::string signature(std::string_view secret, std::string_view string_to_sign);

/// What `verify` enforces besides the signature.
struct verify_options
{
    std::chrono::seconds max_skew{15 * 60};
    /// The longest lifetime of a presigned URL, as with SigV4 (seven days).
    std::chrono::seconds max_expiry = max_presigned_expiry;
};

/// Verifies a parsed request against the caller's secret, in this order:
/// - time: header authentication more than `max_skew` away from `now` → request_time_too_skewed;
///   presigned with Expires before `now` → expired_presigned_request ("Request has expired"), Expires later
///   than `now + max_expiry + max_skew` → authorization_query_parameters_error;
/// - signature (constant-time comparison) → signature_does_not_match.
result<void> verify(const parsed_auth& auth, const request_view& req, std::string_view virtual_host_bucket,
                    std::string_view secret, std::chrono::system_clock::time_point now,
                    const verify_options& options);

/// Client side (tests, fuzzing): the value of the Authorization header, "AWS <key>:<signature>", for a
/// request whose headers (Date or x-amz-date included) are `headers`.
std::string authorization(std::string_view method, std::string_view raw_target,
                          std::span<const header_view> headers, std::string_view access_key_id,
                          std::string_view secret);

/// Client side: `raw_target` with AWSAccessKeyId, Expires (seconds since the epoch) and Signature appended.
std::string presign(std::string_view method, std::string_view raw_target, std::string_view access_key_id,
                    std::string_view secret, std::chrono::system_clock::time_point expires);

} // namespace depot::auth::sigv2
