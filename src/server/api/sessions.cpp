// REST handlers for the web console's sessions: sign in (POST /sessions) with an access key and its secret or
// with an API token, read the current session (its CSRF token), sign out (DELETE /sessions/current). The
// cookie itself is checked in api.cpp (authenticate_api), with the CSRF rule for requests that change
// something.
#include "common/hash.hpp"
#include "server/api/http_api.hpp"
#include "server/audit_requests.hpp"
#include "server/authenticate.hpp"
#include "server/services.hpp"

#include <boost/asio/this_coro.hpp>

namespace depot::server::api {
namespace {

constexpr std::int64_t default_lifetime = 8 * 3600;
constexpr std::int64_t max_lifetime = 24 * 3600;

json::object session_json(const registry::console_session& s)
{
    return json::object{{"id", s.id},
                        {"user_id", s.user_id},
                        {"display_name", s.user_display_name},
                        {"credential", s.credential},
                        {"csrf_token", s.csrf_token},
                        {"created_at", iso8601(s.created_at)},
                        {"expires_at", iso8601(s.expires_at)}};
}

std::string cookie_header(const request_context& ctx, std::string_view value, std::int64_t max_age)
{
    std::string c = std::string(session_cookie_name) + "=" + std::string(value) +
                    "; Path=/api/v1/; HttpOnly; SameSite=Strict; Max-Age=" + std::to_string(max_age);
    if (!ctx.svc->opts.tls_cert_file.empty())
        c += "; Secure";
    return c;
}

response sign_in_refused(std::string_view instance, std::string_view request_id)
{
    json::object body{{"type", "urn:depot:problem:unauthenticated"},
                      {"title", "Unauthenticated"},
                      {"status", 401},
                      {"detail",
                       "The access key and secret, or the API token, are not valid: unknown, revoked, "
                       "expired or wrong."},
                      {"instance", instance},
                      {"request_id", request_id}};
    auto res = json_response(body, http::status::unauthorized);
    res.headers.set(http::field::content_type, "application/problem+json");
    return res;
}

} // namespace

asio::awaitable<result<response>> create_session(request_context& ctx, const path_params&)
{
    // Only where the cookie is honoured: the console's listener (a session opened elsewhere would be a
    // cookie for a host, whatever its port).
    if (!ctx.on_console_listener())
        co_return make_error(errc::not_found, "Console sessions are opened on the console's own listener "
                                              "(--console-listen), not on this one");
    // Login CSRF: another site's page must not sign the victim's browser in as someone else (a cross-site
    // form can post, and its text/plain body can spell JSON). Browsers name the page's origin in Origin on
    // every POST, and Sec-Fetch-Site says whether it is this one; a JSON content type (read_json_object)
    // needs a CORS preflight that depotd never grants.
    if (auto origin = ctx.get("origin"); origin && *origin != own_origin(ctx))
        co_return make_error(errc::access_denied,
                             "A console session may be opened only from the console's own origin");
    if (auto site = ctx.get("sec-fetch-site"); site && *site != "same-origin" && *site != "none")
        co_return make_error(errc::access_denied,
                             "A console session may be opened only from the console's own pages");
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    if (auto only = only_fields(*body, {"access_key_id", "secret_access_key", "token", "expires_in"}); !only)
        co_return std::move(only).error();
    auto key_id = string_field(*body, "access_key_id", false);
    auto secret = string_field(*body, "secret_access_key", false);
    auto token = string_field(*body, "token", false);
    if (!key_id)
        co_return std::move(key_id).error();
    if (!secret)
        co_return std::move(secret).error();
    if (!token)
        co_return std::move(token).error();
    const bool with_key = !key_id->empty() || !secret->empty();
    if (with_key == !token->empty())
        co_return make_error(errc::invalid_argument,
                             "Give either 'access_key_id' and 'secret_access_key', or 'token'");
    if (with_key && (key_id->empty() || secret->empty()))
        co_return make_error(errc::invalid_argument,
                             "Both 'access_key_id' and 'secret_access_key' are required");
    std::int64_t lifetime = default_lifetime;
    if (body->contains("expires_in")) {
        auto seconds = integer_field(*body, "expires_in", 60, max_lifetime);
        if (!seconds)
            co_return std::move(seconds).error();
        lifetime = *seconds;
    }
    const auto instance = std::string("/api/v1/sessions");

    // The credential, checked as a signature or bearer token would be (a failure counts against the
    // client's address like any failed authentication).
    std::string key_param, token_param;
    std::optional<registry::time_point> credential_expiry;
    if (with_key) {
        auto key = co_await ctx.svc->credentials.find_active_key(*key_id);
        if (!key || !constant_time_equal(key->secret, *secret)) {
            record_auth_failure(ctx);
            co_return sign_in_refused(instance, ctx.request_id);
        }
        ctx.who = caller{.user_id = key->user_id,
                         .display_name = key->user_display_name,
                         .access_key_id = key->access_key_id,
                         .is_admin = key->user_is_admin,
                         .scope = key->scope};
        credential_expiry = key->expires_at;
        key_param = key->access_key_id;
    } else {
        auto t = co_await ctx.svc->credentials.authenticate_token(*token);
        if (!t) {
            record_auth_failure(ctx);
            co_return sign_in_refused(instance, ctx.request_id);
        }
        ctx.who = caller{.user_id = t->user_id,
                         .display_name = t->user_display_name,
                         .access_key_id = "token:" + t->id,
                         .is_admin = t->user_is_admin,
                         .scope = t->scope};
        credential_expiry = t->expires_at;
        token_param = t->id;
    }
    // A session never outlives its credential.
    auto expires = std::chrono::system_clock::now() + std::chrono::seconds(lifetime);
    if (credential_expiry && *credential_expiry < expires)
        expires = *credential_expiry;

    ctx.audit = audit_context_of(ctx);
    auto made = co_await ctx.svc->credentials.open_session(ctx.audit, ctx.who.user_id, key_param, token_param,
                                                           expires);
    if (!made)
        co_return std::move(made).error();
    const auto max_age = std::max<std::int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(
                                                       made->expires_at - std::chrono::system_clock::now())
                                                       .count());
    auto res = json_response(session_json(*made), http::status::created);
    res.headers.set(http::field::set_cookie, cookie_header(ctx, made->cookie, max_age));
    res.headers.set(http::field::cache_control, "no-store");
    co_return res;
}

asio::awaitable<result<response>> get_current_session(request_context& ctx, const path_params&)
{
    if (ctx.who.session_id.empty())
        co_return make_error(errc::not_found, "This request was not authenticated by a console session");
    auto cookie = session_cookie(ctx);
    auto s = co_await ctx.svc->credentials.authenticate_session(cookie.value_or(""));
    if (!s)
        co_return std::move(s).error();
    auto res = json_response(session_json(*s));
    res.headers.set(http::field::cache_control, "no-store");
    co_return res;
}

asio::awaitable<result<response>> delete_current_session(request_context& ctx, const path_params&)
{
    if (ctx.who.session_id.empty())
        co_return make_error(errc::not_found, "This request was not authenticated by a console session");
    auto revoked = co_await ctx.svc->credentials.end_session(ctx.audit, ctx.who.session_id);
    if (!revoked)
        co_return std::move(revoked).error();
    response res;
    res.status = http::status::no_content;
    res.headers.set(http::field::set_cookie, cookie_header(ctx, "", 0));
    co_return res;
}

} // namespace depot::server::api
