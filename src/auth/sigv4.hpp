#pragma once
/// \file
/// AWS Signature Version 4 as S3 uses it, exposed step by step (canonical request, string to sign, signing
/// key, signature) so each step can be tested against AWS's worked examples.
///
/// Server side: `parse` extracts the authentication data of a request (Authorization header or presigned
/// query), the caller looks the secret up by `access_key_id`, then `verify` checks time, scope and signature.
/// Client side (tests, bench, depotctl): `sign_headers` and `presign`.
///
/// S3 specifics: the canonical URI is the path decoded once and re-encoded once, never normalized (no removal
/// of "//" or dot segments); the payload hash is the x-amz-content-sha256 value. Every function here is pure
/// and thread-safe; views in `request_view` must outlive the call.

#include "common/result.hpp"

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace depot::auth {

/// One request header. `name` is as received (any case); `value` unmodified.
struct header_view
{
    std::string_view name;
    std::string_view value;
};

/// The parts of an HTTP request that SigV4 covers.
struct request_view
{
    std::string_view method;     ///< "GET"
    std::string_view raw_target; ///< exactly as received, e.g. "/bucket/a%20b?list-type=2&prefix=x"
    std::span<const header_view> headers;
};

/// How the request body is authenticated, from the x-amz-content-sha256 value.
enum class payload_mode
{
    unsigned_payload,           ///< "UNSIGNED-PAYLOAD" (always for presigned URLs without a signed hash)
    signed_hash,                ///< 64 hex characters: the SHA-256 of the body
    streaming_signed,           ///< "STREAMING-AWS4-HMAC-SHA256-PAYLOAD": aws-chunked, signed chunks
    streaming_signed_trailer,   ///< "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER": signed chunks and trailer
    streaming_unsigned_trailer, ///< "STREAMING-UNSIGNED-PAYLOAD-TRAILER": aws-chunked, unsigned, trailer
};

/// The credential scope "<date>/<region>/<service>/aws4_request".
struct credential_scope
{
    std::string date; ///< YYYYMMDD
    std::string region;
    std::string service;
};

/// Formats a scope as it appears in the string to sign: "20130524/us-east-1/s3/aws4_request".
std::string scope_string(const credential_scope& scope);

/// The authentication data of one request, as produced by `parse` (or built by the signing functions).
struct parsed_auth
{
    bool presigned = false;
    std::string access_key_id;
    credential_scope scope;
    std::vector<std::string> signed_headers; ///< lower-case, as listed
    std::string signature;                   ///< lower-case hex
    std::string amz_date; ///< "20130524T000000Z" (x-amz-date / X-Amz-Date, or the Date header converted)
    std::chrono::system_clock::time_point request_time;
    std::chrono::seconds expires{0}; ///< presigned only (1..604800)
    std::string payload_hash;        ///< x-amz-content-sha256 value as sent; "UNSIGNED-PAYLOAD" for presigned
    payload_mode mode = payload_mode::unsigned_payload;
};

/// The longest lifetime of a presigned URL (seven days), in seconds.
inline constexpr std::chrono::seconds max_presigned_expiry{604800};

/// The hex SHA-256 of the empty string, the payload hash of a request without a body.
inline constexpr std::string_view empty_payload_hash =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// Extracts the authentication data of a request without checking the signature.
///
/// Returns nullopt for an anonymous request (no Authorization header and no X-Amz-Algorithm query parameter).
/// Errors:
/// - access_denied: an algorithm other than AWS4-HMAC-SHA256 (Signature Version 2, SigV4a, ...), or no
///   valid x-amz-date / Date header with header authentication;
/// - authorization_header_malformed: the Authorization header cannot be parsed (credential, signed headers,
///   signature), or `host` is not signed;
/// - authorization_query_parameters_error: a presigned query misses a parameter, has a malformed one,
///   repeats one, does not sign `host`, or expires outside 1..604800 seconds;
/// - missing_security_header: header authentication without x-amz-content-sha256;
/// - invalid_argument: a bad x-amz-content-sha256 value, both an Authorization header and a presigned query,
///   a malformed percent-escape in the target, or a streaming payload on a presigned URL;
/// - access_denied "There were headers present in the request which were not signed", with the argument
///   "HeadersNotSigned=<names, comma-separated>": `unsigned_headers` is not empty.
/// The access key id is checked to be printable ASCII (authorization_header_malformed or
/// authorization_query_parameters_error otherwise), so that it can be looked up safely.
result<std::optional<parsed_auth>> parse(const request_view& req);

/// The headers of `req` that change what a request does but are not among `auth.signed_headers`: every
/// x-amz-* header (lower-case names, in request order, each once), as S3 requires, except the two whose
/// values the signature binds another way or that are not used: x-amz-content-sha256 (the payload hash line
/// of the canonical request; ignored on a presigned request unless signed) and x-amz-date (in the string to
/// sign; ignored on a presigned request). Other headers may go unsigned, as on S3: the entity headers of an
/// upload (Content-Type, Cache-Control, ...) describe bytes the sender supplies anyway, Content-MD5, Range
/// and the If-* conditions can only narrow or fail a request, and none of them selects the operation.
std::vector<std::string> unsigned_headers(const request_view& req, const parsed_auth& auth);

/// The canonical request:
/// method \n canonical URI \n canonical query \n canonical headers \n signed headers \n payload hash.
/// For presigned requests X-Amz-Signature is left out of the query. Signed headers missing from the request
/// contribute an empty value. Exposed for tests and for SignatureDoesNotMatch diagnostics.
std::string canonical_request(const request_view& req, const parsed_auth& auth);

/// "AWS4-HMAC-SHA256 \n amz_date \n scope \n hex(sha256(canonical_request))".
std::string string_to_sign(const parsed_auth& auth, std::string_view canonical_request);

/// HMAC chain "AWS4"+secret → date → region → service → "aws4_request"; returns the raw 32-byte key.
std::string signing_key(std::string_view secret, const credential_scope& scope);

/// Lower-case hex HMAC-SHA256 of `string_to_sign` under `signing_key`.
std::string signature(std::string_view signing_key, std::string_view string_to_sign);

/// What `verify` enforces besides the signature.
struct verify_options
{
    std::chrono::seconds max_skew{15 * 60};
    std::string region; ///< if non-empty, the scope's region must equal it
};

/// Verifies a parsed request against the caller's secret, in this order:
/// - scope: region (when `options.region` is set), service "s3", and date equal to the date of `amz_date` →
///   authorization_header_malformed (authorization_query_parameters_error when presigned), naming the values;
/// - time: header authentication more than `max_skew` away from `now` → request_time_too_skewed; presigned
///   with X-Amz-Date later than `now + max_skew` → request_time_too_skewed, and `now` later than
///   X-Amz-Date + X-Amz-Expires → expired_presigned_request;
/// - signature (constant-time comparison) → signature_does_not_match.
result<void> verify(const parsed_auth& auth, const request_view& req, std::string_view secret,
                    std::chrono::system_clock::time_point now, const verify_options& options);

/// Client-side signing parameters.
struct sign_options
{
    std::string access_key_id;
    std::string secret;
    std::string region = "us-east-1";
    std::string service = "s3";
    std::chrono::system_clock::time_point now;
    std::string payload_hash = "UNSIGNED-PAYLOAD"; ///< x-amz-content-sha256; ignored by `presign`
};

/// Signs a request with an Authorization header. `headers` must include `host`; every given header is
/// signed. Returns the headers to add, in this order: x-amz-date, x-amz-content-sha256, authorization
/// (lower-case names). Given x-amz-date, x-amz-content-sha256 and authorization headers are ignored; the
/// caller must not send them besides the returned ones. Throws std::invalid_argument without `host`.
std::vector<std::pair<std::string, std::string>> sign_headers(std::string_view method,
                                                              std::string_view raw_target,
                                                              std::span<const header_view> headers,
                                                              const sign_options& options);

/// Presigns a request: returns `raw_target` (a path, possibly with a query, already percent-encoded as it
/// will be sent) with the X-Amz-Algorithm, -Credential, -Date, -Expires, -SignedHeaders (host only) and
/// -Signature parameters appended. The payload is UNSIGNED-PAYLOAD. Throws std::invalid_argument when
/// `expires` is outside 1..604800 seconds.
std::string presign(std::string_view method, std::string_view raw_target, std::string_view host,
                    std::chrono::seconds expires, const sign_options& options);

} // namespace depot::auth
