// REST handlers for credentials (API tokens and S3 access keys, optionally scoped) and the audit log.
#include "registry/service/audit.hpp"
#include "registry/vocabulary.hpp"
#include "server/api/http_api.hpp"
#include "server/api/paging.hpp"
#include "server/audit_requests.hpp"
#include "server/authorization.hpp"
#include "server/services.hpp"

#include <algorithm>
#include <array>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdint>

namespace depot::server::api {
namespace {

constexpr std::int64_t max_lifetime = 10LL * 365 * 24 * 3600;

json::value scope_value(const std::string& text)
{
    if (text.empty())
        return nullptr;
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    return ec ? json::value(nullptr) : v;
}

json::value time_value(const std::optional<registry::time_point>& t)
{
    return t ? json::value(json::string(iso8601(*t))) : json::value(nullptr);
}

/// What a create call asks for: the owner, an expiry, a scope.
struct credential_request
{
    std::string user;
    std::optional<registry::time_point> expires_at;
    std::string scope; ///< canonical JSON, "" = unrestricted
    std::string name;
};

/// Parses and checks {"user", "expires_in", "scope", "name"}: another user only for an installation admin; a
/// scope's bucket must be the owner's, its model one of the owner's teams'.
asio::awaitable<result<credential_request>> credential_request_of(request_context& ctx, bool named)
{
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    auto only = named ? only_fields(*body, {"user", "expires_in", "scope", "name"})
                      : only_fields(*body, {"user", "expires_in", "scope"});
    if (!only)
        co_return std::move(only).error();
    credential_request out;
    out.user = ctx.who.user_id;
    bool owner_is_admin = ctx.principal.installation_admin;
    if (body->contains("user")) {
        auto user = string_field(*body, "user");
        if (!user)
            co_return std::move(user).error();
        if (auto allowed = authorize_user(ctx, auth::permission::account_write, *user); !allowed)
            co_return std::move(allowed).error();
        if (*user != ctx.who.user_id) {
            auto known = co_await ctx.svc->credentials.get_user(*user);
            if (!known)
                co_return make_error(errc::invalid_argument, "No such user", "user");
            owner_is_admin = known->is_admin;
        }
        out.user = std::move(*user);
    }
    if (named && body->contains("name")) {
        auto name = string_field(*body, "name");
        if (!name)
            co_return std::move(name).error();
        out.name = std::move(*name);
    }
    if (body->contains("expires_in")) {
        auto seconds = integer_field(*body, "expires_in", 1, max_lifetime);
        if (!seconds)
            co_return std::move(seconds).error();
        out.expires_at = std::chrono::system_clock::now() + std::chrono::seconds(*seconds);
    }
    // A credential made with an expiring one expires with it at the latest: a short-lived token must not
    // mint a permanent one. A console session stands for the key or token it was opened with.
    std::optional<registry::time_point> limit = ctx.who.expires_at;
    if (!ctx.who.session_id.empty()) {
        const std::string_view credential = ctx.who.access_key_id;
        if (credential.starts_with("token:")) {
            if (auto t = co_await ctx.svc->credentials.get_token(credential.substr(6)))
                limit = t->expires_at;
        } else if (auto k = co_await ctx.svc->credentials.get_key(credential)) {
            limit = k->expires_at;
        }
    }
    if (limit && (!out.expires_at || *out.expires_at > *limit))
        out.expires_at = limit;
    if (auto it = body->find("scope"); it != body->end() && !it->value().is_null()) {
        if (!it->value().is_object())
            co_return make_error(errc::invalid_argument, "The field 'scope' must be an object", "scope");
        auto parsed = registry::parse_scope(json::serialize(it->value()));
        if (!parsed)
            co_return std::move(parsed).error();
        // The scope narrows what its owner reaches: what it names must be theirs to reach.
        const auth::principal owner{.user_id = out.user, .installation_admin = owner_is_admin};
        auth::granted_scope granted{.scope = &*parsed};
        std::optional<registry::bucket> bucket;
        if (!parsed->bucket.empty())
            if (auto b = co_await ctx.svc->buckets.get(parsed->bucket))
                bucket = std::move(*b);
        if (bucket)
            granted.bucket_owner_id = bucket->owner_id;
        if (!parsed->model.empty())
            if (auto team = co_await ctx.svc->models.get_team(parsed->team)) {
                granted.model_team_role = co_await ctx.svc->models.role_of(team->id, out.user);
                granted.model_exists =
                    static_cast<bool>(co_await ctx.svc->models.get_model(team->id, parsed->model));
            }
        if (auto allowed = auth::authorize(owner, auth::permission::account_write, granted); !allowed) {
            // A scope naming what its owner does not reach is refused (400): a refusal, aimed at what it
            // named.
            note_refusal(ctx, {.team = parsed->team, .bucket = parsed->bucket});
            co_return std::move(allowed).error();
        }
        out.scope = registry::scope_json(*parsed);
    }
    co_return out;
}

json::object token_json(const registry::api_token& t)
{
    json::object o{{"id", t.id},
                   {"user", t.user_id},
                   {"name", t.name},
                   {"created_at", iso8601(t.created_at)},
                   {"expires_at", time_value(t.expires_at)},
                   {"revoked_at", time_value(t.revoked_at)},
                   {"scope", scope_value(t.scope)}};
    if (!t.token.empty())
        o["token"] = t.token;
    return o;
}

json::object key_json(const registry::access_key& k)
{
    json::object o{{"access_key_id", k.access_key_id},       {"user", k.user_id},
                   {"created_at", iso8601(k.created_at)},    {"expires_at", time_value(k.expires_at)},
                   {"revoked_at", time_value(k.revoked_at)}, {"scope", scope_value(k.scope)}};
    if (!k.secret.empty())
        o["secret_access_key"] = k.secret;
    return o;
}

/// Whose credentials a list call shows: the caller's, or with ?user=ID (installation admins) that user's.
asio::awaitable<result<std::string>> listed_user(request_context& ctx)
{
    auto user = ctx.param("user");
    if (!user || *user == ctx.who.user_id)
        co_return ctx.who.user_id;
    if (auto allowed = authorize_user(ctx, auth::permission::account_read, *user); !allowed)
        co_return std::move(allowed).error();
    co_return std::string(*user);
}

} // namespace

asio::awaitable<result<response>> create_token(request_context& ctx, const path_params&)
{
    auto req = co_await credential_request_of(ctx, true);
    if (!req)
        co_return std::move(req).error();
    auto made = co_await ctx.svc->credentials.create_token(ctx.audit, req->user, req->name, req->expires_at,
                                                           req->scope);
    if (!made)
        co_return std::move(made).error();
    co_return json_response(token_json(*made), http::status::created);
}

asio::awaitable<result<response>> list_tokens(request_context& ctx, const path_params&)
{
    auto user = co_await listed_user(ctx);
    if (!user)
        co_return std::move(user).error();
    auto tokens = co_await ctx.svc->credentials.list_tokens(*user);
    json::array items;
    for (const auto& t : tokens)
        items.push_back(token_json(t));
    co_return list_response(std::move(items));
}

asio::awaitable<result<response>> revoke_token(request_context& ctx, const path_params& params)
{
    const std::string id(path_param(params, "token"));
    auto t = co_await ctx.svc->credentials.get_token(id);
    const bool mine = t && authorize_user(ctx, ctx.permission, t->user_id);
    // Another user's token is as absent as an unknown one.
    if (!mine)
        co_return make_error(errc::not_found, "No such token");
    auto revoked = co_await ctx.svc->credentials.revoke_token(ctx.audit, id);
    if (!revoked)
        co_return std::move(revoked).error();
    response res;
    res.status = http::status::no_content;
    co_return res;
}

asio::awaitable<result<response>> create_key(request_context& ctx, const path_params&)
{
    auto req = co_await credential_request_of(ctx, false);
    if (!req)
        co_return std::move(req).error();
    auto made =
        co_await ctx.svc->credentials.create_key(ctx.audit, req->user, {}, {}, req->scope, req->expires_at);
    if (!made)
        co_return std::move(made).error();
    co_return json_response(key_json(*made), http::status::created);
}

asio::awaitable<result<response>> list_keys(request_context& ctx, const path_params&)
{
    auto user = co_await listed_user(ctx);
    if (!user)
        co_return std::move(user).error();
    auto keys = co_await ctx.svc->credentials.list_keys(*user);
    json::array items;
    for (const auto& k : keys)
        items.push_back(key_json(k));
    co_return list_response(std::move(items));
}

asio::awaitable<result<response>> revoke_key(request_context& ctx, const path_params& params)
{
    const std::string id(path_param(params, "key"));
    auto k = co_await ctx.svc->credentials.get_key(id);
    const bool mine = k && authorize_user(ctx, ctx.permission, k->user_id);
    if (!mine)
        co_return make_error(errc::not_found, "No such access key");
    auto revoked = co_await ctx.svc->credentials.revoke_key(ctx.audit, id);
    if (!revoked)
        co_return std::move(revoked).error();
    response res;
    res.status = http::status::no_content;
    co_return res;
}

asio::awaitable<result<response>> list_audit(request_context& ctx, const path_params&)
{
    auto page = page_of(ctx);
    if (!page)
        co_return std::move(page).error();
    registry::audit_query q;
    q.limit = page->limit + 1;
    if (!page->cursor.empty()) {
        std::int64_t n = 0;
        for (char c : page->cursor) {
            if (c < '0' || c > '9' || n > INT64_MAX / 10 - 10)
                co_return make_error(errc::invalid_argument, "cursor is not one this API returned", "cursor");
            n = n * 10 + (c - '0');
        }
        q.after_id = n;
    }
    constexpr std::array<std::string_view, 8> known = {"since",  "until",    "actor", "team",
                                                       "action", "resource", "limit", "cursor"};
    for (const auto& [name, value] : ctx.query)
        if (std::find(known.begin(), known.end(), name) == known.end())
            co_return make_error(errc::invalid_argument,
                                 "Unknown parameter '" + name +
                                     "' (known: since, until, actor, team, action, resource, limit, cursor)",
                                 name);
    q.since = std::string(ctx.param("since").value_or(""));
    q.until = std::string(ctx.param("until").value_or(""));
    q.actor = std::string(ctx.param("actor").value_or(""));
    q.team = std::string(ctx.param("team").value_or(""));
    q.action = std::string(ctx.param("action").value_or(""));
    q.resource = std::string(ctx.param("resource").value_or(""));
    q.viewer = ctx.who.user_id;
    // Team admins read their teams' rows (list_audit filters); anyone else has no audit log to read.
    q.viewer_is_admin = ctx.principal.installation_admin;
    if (auto allowed = co_await authorize_installation(ctx, ctx.permission); !allowed)
        co_return std::move(allowed).error();
    auto rows = co_await registry::audit_log::list(*ctx.svc->db, q);
    if (!rows)
        co_return std::move(rows).error();
    std::optional<std::string> next;
    if (rows->size() > page->limit) {
        rows->resize(page->limit);
        auto last = json::parse(rows->back());
        next = std::to_string(last.as_object().at("id").as_int64());
    }
    json::array items;
    for (const auto& r : *rows)
        items.push_back(json::parse(r));
    co_return list_response(std::move(items), next);
}

} // namespace depot::server::api
