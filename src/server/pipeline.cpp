#include "server/pipeline.hpp"

#include "server/api/api.hpp"
#include "server/authorization.hpp"

#include <cctype>

namespace depot::server {
namespace {

bool iequals_prefix(std::string_view s, std::string_view prefix)
{
    if (s.size() < prefix.size())
        return false;
    for (std::size_t i = 0; i < prefix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(s[i])) !=
            std::tolower(static_cast<unsigned char>(prefix[i])))
            return false;
    return true;
}

/// The scheme word of an Authorization value, and whether it is followed by white space.
bool scheme_is(std::string_view value, std::string_view scheme)
{
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
        value.remove_prefix(1);
    return value.size() > scheme.size() && value.substr(0, scheme.size()) == scheme &&
           (value[scheme.size()] == ' ' || value[scheme.size()] == '\t');
}

/// Whether a query parameter's (still percent-encoded) name is `name` or, with `prefix`, starts with it
/// (case-insensitively, as S3 reads X-Amz-* names). Encoded names are compared as sent: an encoded
/// X-Amz- prefix is decoded by the S3 parser and answered there as whatever it is.
bool has_param(std::string_view query, std::string_view name, bool prefix)
{
    while (!query.empty()) {
        const auto amp = query.find('&');
        auto piece = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
        const auto key = piece.substr(0, piece.find('='));
        if (prefix ? iequals_prefix(key, name) : key == name)
            return true;
    }
    return false;
}

std::size_t segment_count_and_third(std::string_view path, std::string_view& third)
{
    std::size_t n = 0;
    while (!path.empty()) {
        path.remove_prefix(1);
        const auto slash = path.find('/');
        if (n == 2)
            third = path.substr(0, slash);
        ++n;
        path = slash == std::string_view::npos ? std::string_view() : path.substr(slash);
    }
    return n;
}

} // namespace

credential_kind credential_of(bool has_authorization, std::string_view authorization, std::string_view query)
{
    // A presigned query decides first: with a header too, the S3 parsers refuse the pair ("only one auth
    // mechanism"), so such a request must reach them.
    if (has_param(query, "X-Amz-", true))
        return credential_kind::sigv4_query;
    if (has_param(query, "AWSAccessKeyId", false) || has_param(query, "Signature", false))
        return credential_kind::sigv2_query;
    if (!has_authorization)
        return credential_kind::none;
    if (scheme_is(authorization, "Bearer") || scheme_is(authorization, "bearer"))
        return credential_kind::bearer;
    if (scheme_is(authorization, "AWS4-HMAC-SHA256"))
        return credential_kind::sigv4_header;
    if (scheme_is(authorization, "AWS"))
        return credential_kind::sigv2_header;
    return credential_kind::other_header;
}

surface choose_surface(const request_shape& r)
{
    // A virtual-hosted request names its bucket in Host: whatever its path (a key may be "api/v1/..."), it
    // is S3's. The REST API is served on the bare host only.
    if (r.virtual_hosted)
        return surface::s3;
    if (api::is_api_target(r.path))
        return surface::rest;
    if (r.credentials != credential_kind::none && r.credentials != credential_kind::bearer)
        return surface::s3;
    if (r.method != "GET" && r.method != "HEAD" && r.method != "POST")
        return surface::s3;
    bool hub_shaped = r.path.starts_with("/api/models/");
    if (!hub_shaped && r.method != "POST") {
        std::string_view third;
        hub_shaped = segment_count_and_third(r.path, third) >= 5 && third == "resolve";
    }
    if (!hub_shaped)
        return surface::s3;
    return r.credentials == credential_kind::bearer ? surface::hub : surface::hub_unless_bucket;
}

std::string_view to_string(resource_kind k) noexcept
{
    switch (k) {
    case resource_kind::caller:
        return "caller";
    case resource_kind::sign_in:
        return "sign_in";
    case resource_kind::preflight:
        return "preflight";
    case resource_kind::account:
        return "account";
    case resource_kind::installation:
        return "installation";
    case resource_kind::service:
        return "service";
    case resource_kind::bucket:
        return "bucket";
    case resource_kind::new_bucket:
        return "new_bucket";
    case resource_kind::object:
        return "object";
    case resource_kind::team:
        return "team";
    case resource_kind::model:
        return "model";
    }
    return "?";
}

namespace {

bool unauthenticated_kind(resource_kind on) noexcept
{
    return on == resource_kind::sign_in || on == resource_kind::preflight;
}

} // namespace

asio::awaitable<result<route_authorized>> authorization_step::s3(request_context& ctx, auth::permission what,
                                                                 resource_kind on, std::string_view operation)
{
    if (unauthenticated_kind(on) || ctx.header == nullptr)
        co_return make_error(errc::access_denied, "Access Denied");
    if (auto allowed = co_await authorize_s3_request(ctx, what, operation); !allowed)
        co_return std::move(allowed).error();
    // A bucket or object route's bucket is decided here, with every fact (ACLs, policy, views, Object
    // Lock's bypass), and handed to the handler: no handler loads or decides its bucket itself.
    if (on == resource_kind::bucket || on == resource_kind::object) {
        auto b = co_await load_authorized_bucket(ctx, ctx.bucket, what, ctx.key, ctx.s3_action, true);
        if (!b)
            co_return std::move(b).error();
        ctx.route_bucket = std::move(*b);
    }
    co_return route_authorized(what, on);
}

asio::awaitable<result<route_authorized>> authorization_step::rest(request_context& ctx,
                                                                   auth::permission what, route_resource on,
                                                                   const api::path_params& params)
{
    if (unauthenticated_kind(on.value))
        co_return make_error(errc::access_denied, "This route is not an authorized request");
    if (auto allowed = authorize_api_request(ctx, what, params); !allowed)
        co_return std::move(allowed).error();
    // A {bucket} route's bucket is decided here, as S3's is: no handler loads or decides it itself.
    if (on.value == resource_kind::bucket) {
        auto b = co_await api::caller_bucket(ctx, api::path_param(params, "bucket"), on.policy_action);
        if (!b)
            co_return std::move(b).error();
        ctx.route_bucket = std::move(*b);
    }
    co_return route_authorized(what, on.value);
}

result<route_authorized> authorization_step::hub(request_context& ctx, auth::permission what,
                                                 resource_kind on, std::string_view team,
                                                 std::string_view model)
{
    if (on != resource_kind::model)
        return make_error(errc::access_denied, "A Hub route acts on a model");
    if (auto allowed = auth::authorize(ctx.principal, what, auth::hf_model{.team = team, .model = model});
        !allowed)
        return std::move(allowed).error();
    return route_authorized(what, on);
}

result<route_authorized> authorization_step::unauthenticated(auth::permission what, resource_kind on)
{
    if ((what == auth::permission::cors_preflight && on == resource_kind::preflight) ||
        (what == auth::permission::session_start && on == resource_kind::sign_in))
        return route_authorized(what, on);
    return make_error(errc::access_denied, "Only a CORS preflight and a console sign-in run unauthenticated");
}

} // namespace depot::server
