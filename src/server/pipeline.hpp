#pragma once
/// \file
/// The request pipeline every surface runs (S3 in server/dispatch.cpp, REST in server/api/api.cpp, the
/// Hugging Face Hub API in server/hf/hf.cpp): which surface a request is for, decided by what the request is
/// (its credentials and its host) before the shape of its path; then parse and validate, authenticate,
/// rate limit, authorize, handler, with only addressing, route matching and error rendering differing per
/// surface.

#include "auth/authorize.hpp"
#include "common/result.hpp"
#include "server/api/http_api.hpp"
#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace depot::server {

namespace asio = boost::asio;

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

/// Which surface serves the request. S3 for anything addressed virtual-host style, whatever its path (a key
/// may read "api/v1/..."); then REST for /api/v1 and below (it accepts tokens, console sessions and SigV4);
/// otherwise S3 for anything carrying S3 credentials, whatever its path looks like: a valid S3 request is
/// never answered by another protocol. The Hub API only for a GET,
/// HEAD or POST under /api/models/ or a GET or HEAD of /{team}/{model}/resolve/{revision}/{path} that
/// carries a bearer token (S3 never accepts one) or no credentials at all (then hub_unless_bucket).
surface choose_surface(const request_shape& r);

/// What a route acts on: what the authorization step authorizes the route's permission for. A column of
/// each route table with no default, so a route cannot be registered without it (nor without its
/// permission, auth::route_permission).
enum class resource_kind : std::uint8_t
{
    caller,       ///< the caller's own credential (whoami, the current session)
    sign_in,      ///< nothing yet: createSession authenticates from its body (the handler checks it)
    preflight,    ///< nothing: a CORS preflight, answered from the bucket's configuration unauthenticated
    account,      ///< the caller's tokens, keys, usage and content look-ups
    installation, ///< users, teams, the whole audit log
    service,      ///< S3's service level (ListBuckets)
    bucket,       ///< a bucket: S3's, or REST's {bucket}; S3's is loaded and decided by the step
    new_bucket,   ///< a bucket to create (S3 CreateBucket): named, not yet a row
    object,       ///< a key of a bucket (S3)
    team,         ///< REST's {team}
    model,        ///< REST's {team}/{model}, the Hub API's repo
};
std::string_view to_string(resource_kind k) noexcept;

struct route_resource
{
    resource_kind value;
    /// REST's {bucket}: the AWS action the route counts as in the bucket's policy ("" for none: a route whose
    /// handler decides the keys it acts on, with their own actions).
    std::string_view policy_action{};
    constexpr route_resource(resource_kind k) noexcept : value(k) {} // NOLINT: implicit on purpose
    constexpr route_resource(resource_kind k, std::string_view action) noexcept
        : value(k), policy_action(action)
    {}
};

/// Proof that the authorization step allowed a request's route: only `authorization_step` constructs one,
/// and a route table's handler (`guarded`) can be called only with one, for the route's own permission and
/// resource (run_handler). So no handler runs without the authorization step, by construction
/// (tests/layering/check_routes.py, ctest routes_reach_handlers_only_authorized, checks the tables use it).
class route_authorized
{
public:
    auth::permission permission() const noexcept { return permission_; }
    resource_kind resource() const noexcept { return resource_; }

private:
    route_authorized(auth::permission p, resource_kind r) noexcept : permission_(p), resource_(r) {}
    auth::permission permission_;
    resource_kind resource_;
    friend class authorization_step;
};

/// The authorization step of the pipeline, one entry per surface: the route's declared permission on the
/// resource it declares, decided by auth::authorize with the facts server/authorization.hpp resolves. Each
/// answers the refusal or the proof.
class authorization_step
{
public:
    /// An S3 route (its permission and resource from server/dispatch.cpp's table, `operation` its AWS
    /// name): authorize_s3_request (scope, views, a copy's source), then, for a bucket or object route, the
    /// bucket itself (load_authorized_bucket), kept in ctx.route_bucket for the handler.
    static asio::awaitable<result<route_authorized>> s3(request_context& ctx, auth::permission what,
                                                        resource_kind on, std::string_view operation);
    /// A REST route: authorize_api_request (the scope against the path parameters), then, for a {bucket}
    /// route, the bucket itself: its owner or an installation admin (another user's bucket is answered as
    /// absent), and the bucket's policy asked for `on.policy_action`; kept in ctx.route_bucket for the
    /// handler. The team rows are authorized by the handlers as they load them (authorize_team); a bucket a
    /// body names, by caller_bucket.
    static asio::awaitable<result<route_authorized>> rest(request_context& ctx, auth::permission what,
                                                          route_resource on, const api::path_params& params);
    /// A Hub route: the model `team/model` (auth::hf_model).
    static result<route_authorized> hub(request_context& ctx, auth::permission what, resource_kind on,
                                        std::string_view team, std::string_view model);
    /// The two routes that run unauthenticated by design, allowed here and nowhere else: a CORS preflight
    /// (permission cors_preflight) and a console sign-in (session_start). Any other permission is refused.
    static result<route_authorized> unauthenticated(auth::permission what, resource_kind on);
};

/// A route table's handler column: the function, callable only with a proof (run_handler).
template <class Fn>
class guarded
{
public:
    constexpr guarded(Fn fn) noexcept : fn_(fn) {}               // NOLINT: implicit on purpose
    constexpr guarded(std::nullptr_t) noexcept : fn_(nullptr) {} // NOLINT: not implemented yet
    constexpr bool implemented() const noexcept { return fn_ != nullptr; }
    constexpr bool is(Fn fn) const noexcept { return fn_ == fn; }
    template <class... Args>
    auto operator()(const route_authorized&, Args&&... args) const
    {
        return fn_(std::forward<Args>(args)...);
    }

private:
    Fn fn_;
};

/// Runs route `r`'s handler (any table's route: members fn, permission and resource) with the proof that
/// its own permission and resource were authorized; a proof for another permission or resource is a bug
/// and throws (answered 500), it never runs the handler.
template <class Route, class... Args>
auto run_handler(const Route& r, const route_authorized& proof, Args&&... args)
{
    if (proof.permission() != r.permission.value || proof.resource() != r.resource.value)
        throw std::logic_error("a route's handler was called with another route's authorization");
    return r.fn(proof, std::forward<Args>(args)...);
}

} // namespace depot::server
