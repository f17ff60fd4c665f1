// Authentication of S3 requests: SigV4 in the Authorization header or a presigned query string, checked
// against the access key's secret from the registry. Runs on the header alone, before any body byte is read.
#include "server/authenticate.hpp"

#include "auth/sigv4.hpp"
#include "common/hash.hpp"
#include "server/chunked_body.hpp"
#include "server/rate_limit.hpp"
#include "server/services.hpp"

#include <chrono>

namespace depot::server {

namespace {

asio::awaitable<result<std::optional<auth::parsed_auth>>> check_signature(request_context& ctx)
{
    std::vector<auth::header_view> headers;
    headers.reserve(16);
    for (const auto& f : *ctx.header)
        headers.push_back({std::string_view(f.name_string().data(), f.name_string().size()),
                           std::string_view(f.value().data(), f.value().size())});
    auto method = ctx.header->method_string();
    auto target = ctx.header->target();
    auth::request_view view{std::string_view(method.data(), method.size()),
                            std::string_view(target.data(), target.size()), headers};

    auto parsed = auth::parse(view);
    if (!parsed)
        co_return std::move(parsed).error();
    if (!*parsed)
        co_return std::optional<auth::parsed_auth>{};
    auto& a = **parsed;

    auto key = co_await ctx.svc->identities.find_active_key(a.access_key_id);
    if (!key)
        co_return make_error(errc::invalid_access_key_id,
                             "The AWS Access Key Id you provided does not exist in our records.");
    auto verified = auth::verify(a, view, key->secret, std::chrono::system_clock::now(),
                                 {.max_skew = ctx.svc->opts.max_clock_skew, .region = ctx.svc->opts.region});
    if (!verified)
        co_return std::move(verified).error();

    ctx.who = caller{.user_id = key->user_id,
                     .display_name = key->user_display_name,
                     .access_key_id = key->access_key_id,
                     .is_admin = key->user_is_admin,
                     .scope = key->scope};
    if (a.mode == auth::payload_mode::signed_hash) {
        ctx.payload.sha256 = from_hex(a.payload_hash).value_or(std::string());
    } else if (a.mode != auth::payload_mode::unsigned_payload) {
        // aws-chunked: the body is framed in chunks (signed unless the mode says otherwise); consumers read
        // the decoded payload and its declared length.
        auto decoder = auth::make_aws_chunked_decoder(a, view, key->secret);
        if (!decoder)
            co_return std::move(decoder).error();
        auto decoded_length = ctx.get("x-amz-decoded-content-length");
        if (!decoded_length)
            co_return make_error(
                errc::missing_content_length,
                "You must provide the x-amz-decoded-content-length header with an aws-chunked body.");
        ctx.content_length.reset();
        if (decoded_length)
            ctx.content_length = std::stoull(std::string(*decoded_length));
        ctx.body_decoder = std::make_unique<chunked_body>(*ctx.body, std::move(*decoder));
        ctx.body = ctx.body_decoder.get();
    }
    co_return std::move(*parsed);
}

} // namespace

asio::awaitable<result<std::optional<auth::parsed_auth>>> authenticate(request_context& ctx)
{
    auto r = co_await check_signature(ctx);
    if (!r)
        record_auth_failure(ctx);
    co_return r;
}

std::optional<std::chrono::seconds> auth_cooldown(const request_context& ctx)
{
    auto& limiter = ctx.svc->auth_failures;
    if (!limiter.enabled())
        return std::nullopt;
    auto wait = limiter.refused(address_key(ctx.remote));
    if (!wait)
        return std::nullopt;
    // Rounded up: a client told "0 seconds" would retry at once and be refused again.
    return std::chrono::ceil<std::chrono::seconds>(*wait);
}

void record_auth_failure(const request_context& ctx)
{
    auto& limiter = ctx.svc->auth_failures;
    if (limiter.enabled())
        limiter.failed(address_key(ctx.remote));
}

} // namespace depot::server
