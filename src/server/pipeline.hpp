#pragma once
/// \file
/// The request pipeline every surface runs (S3 in server/dispatch.cpp, REST in server/api/api.cpp, the
/// Hugging Face Hub API in server/hf/hf.cpp): which surface a request is for, decided by what the request is
/// (its credentials and its host) before the shape of its path; then parse and validate, authenticate,
/// rate limit, authorize, handler, with only addressing, route matching and error rendering differing per
/// surface.

#include <string_view>

namespace depot::server {

/// The credentials a request carries, from its Authorization header and query string alone (nothing is
/// looked up, nothing verified).
enum class credential_kind
{
    none,         ///< no Authorization header, no presigned query
    bearer,       ///< Authorization: Bearer (an API token: REST and the Hub API, never S3)
    sigv4_header, ///< Authorization: AWS4-HMAC-SHA256
    sigv2_header, ///< Authorization: AWS key:signature
    sigv4_query,  ///< presigned SigV4 (an X-Amz-* query parameter: X-Amz-Algorithm, X-Amz-Signature, ...)
    sigv2_query,  ///< presigned SigV2 (AWSAccessKeyId or Signature query parameter)
    other_header, ///< an Authorization header of another scheme (refused by whichever surface sees it)
};

/// `authorization`: the header's value, or nullptr-like (has_authorization false) when absent. `query`: the
/// raw query string (after '?'), percent-encoded.
credential_kind credential_of(bool has_authorization, std::string_view authorization, std::string_view query);

/// Whether the kind is one of S3's (a signature, in a header or a presigned query).
constexpr bool is_s3_credential(credential_kind k) noexcept
{
    return k == credential_kind::sigv4_header || k == credential_kind::sigv2_header ||
           k == credential_kind::sigv4_query || k == credential_kind::sigv2_query;
}

enum class surface
{
    s3,
    rest,
    hub,
    /// A Hub-shaped request without credentials: the Hub API's (which answers it 401, needs a token) unless
    /// its first path segment names a bucket whose public grants may answer it, when it is an S3 read
    /// (anonymous GetObject of a key such as team-bucket/model/resolve/main/file). The dispatcher decides
    /// with the bucket lookup.
    hub_unless_bucket,
};

/// What the choice is made from.
struct request_shape
{
    std::string_view method; ///< GET, HEAD, POST, ...
    std::string_view path;   ///< raw (percent-encoded) path, without the query
    credential_kind credentials = credential_kind::none;
    bool virtual_hosted = false; ///< Host is BUCKET.<--domain>: S3's addressing
};

/// Which surface serves the request. REST for /api/v1 and below (it accepts tokens, console sessions and
/// SigV4). Otherwise S3 for anything carrying S3 credentials or addressed virtual-host style, whatever its
/// path looks like: a valid S3 request is never answered by another protocol. The Hub API only for a GET,
/// HEAD or POST under /api/models/ or a GET or HEAD of /{team}/{model}/resolve/{revision}/{path} that
/// carries a bearer token (S3 never accepts one) or no credentials at all (then hub_unless_bucket).
surface choose_surface(const request_shape& r);

} // namespace depot::server
