// The CORS preflight (OPTIONS object) —
// https://docs.aws.amazon.com/AmazonS3/latest/API/RESTOPTIONSobject.html — and the CORS headers of actual
// requests from a browser. Neither is authenticated: a browser sends the preflight without credentials, and
// what it learns is only what the bucket's owner configured for that origin. A bucket that does not exist
// answers exactly like one without a configuration.
#include "common/log.hpp"
#include "s3/cors.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {
namespace {

/// The bucket's configuration, or nullopt for no bucket or none configured.
asio::awaitable<std::optional<s3::cors_configuration>> configuration_of(request_context& ctx)
{
    if (ctx.bucket.empty())
        co_return std::nullopt;
    auto bucket = co_await ctx.svc->buckets.get(ctx.bucket);
    if (!bucket || bucket->cors.empty())
        co_return std::nullopt;
    auto config = s3::parse_cors_configuration(bucket->cors);
    if (!config) { // stored by PutBucketCors, so it parsed once: a bug, not the caller's fault
        log::error("a stored CORS configuration does not parse", {{"bucket", ctx.bucket}});
        co_return std::nullopt;
    }
    co_return std::move(*config);
}

} // namespace

asio::awaitable<result<response>> cors_preflight(request_context& ctx)
{
    const auto origin = ctx.get("origin");
    if (!origin || origin->empty())
        co_return make_error(errc::bad_request, "Insufficient information. Origin request header needed.");
    const auto method = ctx.get("access-control-request-method");
    if (!method || method->empty())
        co_return make_error(errc::bad_request, "Invalid Access-Control-Request-Method: null");
    const auto requested = ctx.get("access-control-request-headers").value_or("");
    const auto config = co_await configuration_of(ctx);
    if (!config)
        co_return make_error(errc::cors_forbidden, "CORSResponse: CORS is not enabled for this bucket.");
    const auto* rule = s3::find_cors_rule(*config, *origin, *method, requested);
    if (!rule)
        co_return make_error(
            errc::cors_forbidden,
            "CORSResponse: This CORS request is not allowed. This is usually because the "
            "evaluation of Origin, request method / Access-Control-Request-Method or "
            "Access-Control-Request-Headers are not whitelisted by the resource's CORS spec.");
    response res;
    for (auto& [name, value] : s3::cors_preflight_headers(*rule, *origin, requested))
        res.headers.set(name, value);
    co_return res;
}

asio::awaitable<void> add_cors_headers(request_context& ctx, response& res)
{
    const auto origin = ctx.get("origin");
    if (!origin || origin->empty() || ctx.bucket.empty())
        co_return;
    std::optional<s3::cors_configuration> config;
    try {
        config = co_await configuration_of(ctx);
    } catch (const std::exception& e) { // the response itself is already decided; it goes without them
        log::warn("CORS headers left out: the bucket could not be read",
                  {{"request_id", ctx.request_id}, {"error", e.what()}});
    }
    if (!config)
        co_return;
    const auto verb = ctx.header->method_string();
    if (const auto* rule =
            s3::find_cors_rule(*config, *origin, std::string_view(verb.data(), verb.size()), ""))
        for (auto& [name, value] : s3::cors_response_headers(*rule, *origin))
            res.headers.set(name, value);
}

} // namespace depot::server::s3op
