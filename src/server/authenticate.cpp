// Authentication of S3 requests: SigV4 or SigV2 in the Authorization header or a presigned query string,
// checked against the access key's secret from the registry. Runs on the header alone, before any body byte
// is read.
#include "server/authenticate.hpp"

#include "auth/sigv2.hpp"
#include "auth/sigv4.hpp"
#include "common/hash.hpp"
#include "server/chunked_body.hpp"
#include "server/rate_limit.hpp"
#include "server/services.hpp"

#include <chrono>

namespace depot::server {

namespace {

void set_caller(request_context& ctx, const registry::access_key& key)
{
    ctx.who = caller_of(key);
}

/// The bucket a virtual-hosted-style request names (SigV2 signs "/bucket" + path then), empty for a
/// path-style request.
std::string_view virtual_host_bucket(const request_context& ctx)
{
    return !ctx.bucket.empty() && !virtual_host_bucket_of(ctx).empty() ? ctx.bucket : std::string_view();
}

/// Signature Version 2 (boto3's default presigned URLs, s3cmd's signature_v2): the same key lookup, the
/// same caller (and so the same scope and team checks), the same presign lifetime limit as SigV4. The body
/// is unsigned unless the (signed) x-amz-content-sha256 header names its hash. Returned as a parsed SigV4
/// structure with an unsigned payload, which is all the callers look at.
asio::awaitable<result<std::optional<auth::parsed_auth>>> check_sigv2(request_context& ctx,
                                                                      const auth::request_view& view)
{
    auto parsed = auth::sigv2::parse(view);
    if (!parsed)
        co_return std::move(parsed).error();
    auto key = co_await ctx.svc->credentials.find_active_key(parsed->access_key_id);
    if (!key)
        co_return make_error(errc::invalid_access_key_id,
                             "The AWS Access Key Id you provided does not exist in our records.");
    const std::string_view vhost_bucket = virtual_host_bucket(ctx);
    auto verified =
        auth::sigv2::verify(*parsed, view, vhost_bucket, key->secret, std::chrono::system_clock::now(),
                            {.max_skew = ctx.svc->opts.max_clock_skew});
    if (!verified)
        co_return std::move(verified).error();
    set_caller(ctx, *key);
    auth::parsed_auth out;
    out.presigned = parsed->presigned;
    out.access_key_id = parsed->access_key_id;
    out.payload_hash = "UNSIGNED-PAYLOAD";
    if (auto sha = ctx.get("x-amz-content-sha256"); sha && *sha != "UNSIGNED-PAYLOAD") {
        out.mode = auth::payload_mode::signed_hash;
        out.payload_hash = std::string(*sha);
        ctx.payload.sha256 = from_hex(out.payload_hash).value_or(std::string());
    }
    co_return std::optional<auth::parsed_auth>(std::move(out));
}

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
    if (auth::sigv2::applies(view))
        co_return co_await check_sigv2(ctx, view);

    auto parsed = auth::parse(view);
    if (!parsed)
        co_return std::move(parsed).error();
    if (!*parsed)
        co_return std::optional<auth::parsed_auth>{};
    auto& a = **parsed;

    auto key = co_await ctx.svc->credentials.find_active_key(a.access_key_id);
    if (!key)
        co_return make_error(errc::invalid_access_key_id,
                             "The AWS Access Key Id you provided does not exist in our records.");
    auto verified = auth::verify(a, view, key->secret, std::chrono::system_clock::now(),
                                 {.max_skew = ctx.svc->opts.max_clock_skew, .region = ctx.svc->opts.region});
    if (!verified)
        co_return std::move(verified).error();

    set_caller(ctx, *key);
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

/// The bucket a virtual-hosted-style request names in its Host header (BUCKET.<--domain>), else "".
std::string_view virtual_host_bucket_of(const request_context& ctx)
{
    const auto& domain = ctx.svc->opts.domain;
    if (domain.empty())
        return {};
    auto host = ctx.get("host").value_or("");
    if (auto colon = host.rfind(':');
        colon != std::string_view::npos && host.find(']') == std::string_view::npos)
        host = host.substr(0, colon);
    if (host.size() > domain.size() + 1 && host.ends_with(domain) &&
        host[host.size() - domain.size() - 1] == '.')
        return host.substr(0, host.size() - domain.size() - 1);
    return {};
}

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

caller caller_of(const registry::access_key& key)
{
    return caller{.user_id = key.user_id,
                  .display_name = key.user_display_name,
                  .access_key_id = key.access_key_id,
                  .is_admin = key.user_is_admin,
                  .scope = key.scope,
                  .expires_at = key.expires_at};
}

caller caller_of(const registry::api_token& token)
{
    return caller{.user_id = token.user_id,
                  .display_name = token.user_display_name,
                  .access_key_id = "token:" + token.id,
                  .is_admin = token.user_is_admin,
                  .scope = token.scope,
                  .expires_at = token.expires_at};
}

caller caller_of(const registry::console_session& session)
{
    return caller{.user_id = session.user_id,
                  .display_name = session.user_display_name,
                  .access_key_id = session.credential,
                  .is_admin = session.user_is_admin,
                  .scope = session.scope,
                  .session_id = session.id};
}

asio::awaitable<bool> authenticate_bearer(request_context& ctx, std::string_view token)
{
    auto t = co_await ctx.svc->credentials.authenticate_token(token);
    if (!t) {
        record_auth_failure(ctx);
        co_return false;
    }
    ctx.who = caller_of(*t);
    co_return true;
}

} // namespace depot::server
