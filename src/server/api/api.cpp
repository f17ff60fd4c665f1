// The REST API's router: route table, path matching, authentication, and the one place where errors and
// exceptions become problem responses.
#include "server/api/api.hpp"

#include "common/hash.hpp"
#include "common/log.hpp"
#include "common/uri.hpp"
#include "s3/utf8.hpp"
#include "server/api/http_api.hpp"
#include "server/audit_requests.hpp"
#include "server/authenticate.hpp"
#include "server/authorization.hpp"
#include "server/errors.hpp"
#include "server/pipeline.hpp"
#include "server/services.hpp"

#include <array>
#include <boost/asio/this_coro.hpp>
#include <chrono>

namespace depot::server::api {
namespace {

constexpr std::string_view root = "/api/v1";

struct route
{
    http::verb method;
    std::string_view pattern; ///< below /api/v1; `{name}` matches one non-empty segment
    std::string_view name;    ///< for logs and metrics (the OpenAPI operationId)
    guarded<handler> fn;      ///< callable only with the authorization step's proof (server/pipeline.hpp)
    auth::route_permission permission; ///< what the call does (auth/authorize.hpp); required
    route_resource resource;           ///< what it acts on (server/pipeline.hpp); required
};

using auth::permission;

constexpr std::array<route, 69> routes = {{
    {http::verb::get, "/whoami", "whoami", whoami, permission::whoami, resource_kind::caller},
    {http::verb::post, "/sessions", "createSession", create_session, permission::session_start,
     resource_kind::sign_in},
    {http::verb::get, "/sessions/current", "getCurrentSession", get_current_session, permission::whoami,
     resource_kind::caller},
    {http::verb::delete_, "/sessions/current", "deleteCurrentSession", delete_current_session,
     permission::session_end, resource_kind::caller},
    {http::verb::post, "/content/lookup", "lookupContent", lookup_content, permission::account_write,
     resource_kind::account},
    {http::verb::get, "/usage", "getUsage", owner_usage, permission::account_read, resource_kind::account},
    {http::verb::get, "/audit", "listAudit", list_audit, permission::audit_read, resource_kind::installation},
    {http::verb::get, "/tokens", "listTokens", list_tokens, permission::account_read, resource_kind::account},
    {http::verb::post, "/tokens", "createToken", create_token, permission::account_write,
     resource_kind::account},
    {http::verb::delete_, "/tokens/{token}", "revokeToken", revoke_token, permission::account_write,
     resource_kind::account},
    {http::verb::get, "/users", "listUsers", list_users, permission::users_read, resource_kind::installation},
    {http::verb::post, "/users", "createUser", create_user, permission::users_write,
     resource_kind::installation},
    {http::verb::get, "/keys", "listKeys", list_keys, permission::account_read, resource_kind::account},
    {http::verb::post, "/keys", "createKey", create_key, permission::account_write, resource_kind::account},
    {http::verb::delete_, "/keys/{key}", "revokeKey", revoke_key, permission::account_write,
     resource_kind::account},
    {http::verb::get, "/buckets/{bucket}", "getBucket", get_bucket, permission::bucket_info_read,
     route_resource(resource_kind::bucket, "s3:ListBucket")},
    {http::verb::patch, "/buckets/{bucket}", "updateBucket", update_bucket, permission::bucket_info_write,
     resource_kind::bucket},
    {http::verb::get, "/buckets/{bucket}/usage", "getBucketUsage", bucket_usage, permission::bucket_info_read,
     route_resource(resource_kind::bucket, "s3:ListBucket")},
    {http::verb::post, "/buckets/{bucket}/objects", "createObjectFromDigest", create_object_from_digest,
     permission::bucket_info_write, resource_kind::bucket},
    {http::verb::get, "/buckets/{bucket}/snapshots", "listSnapshots", list_snapshots,
     permission::bucket_info_read, route_resource(resource_kind::bucket, "s3:ListBucket")},
    {http::verb::post, "/buckets/{bucket}/snapshots", "createSnapshot", create_snapshot,
     permission::bucket_info_write, route_resource(resource_kind::bucket, "s3:ListBucket")},
    {http::verb::get, "/buckets/{bucket}/snapshots/{snapshot}", "getSnapshot", get_snapshot,
     permission::bucket_info_read, route_resource(resource_kind::bucket, "s3:ListBucket")},
    {http::verb::delete_, "/buckets/{bucket}/snapshots/{snapshot}", "deleteSnapshot", delete_snapshot,
     permission::bucket_info_write, resource_kind::bucket},
    {http::verb::post, "/buckets/{bucket}/snapshots/{snapshot}/restore", "restoreSnapshot", restore_snapshot,
     permission::bucket_info_write, resource_kind::bucket},
    {http::verb::get, "/teams", "listTeams", list_teams, permission::teams_list, resource_kind::account},
    {http::verb::post, "/teams", "createTeam", create_team, permission::team_create,
     resource_kind::installation},
    {http::verb::get, "/teams/{team}", "getTeam", get_team, permission::team_read, resource_kind::team},
    {http::verb::get, "/teams/{team}/members", "listTeamMembers", list_members,
     permission::team_contents_read, resource_kind::team},
    {http::verb::put, "/teams/{team}/members/{user}", "setTeamMember", set_member,
     permission::team_members_write, resource_kind::team},
    {http::verb::delete_, "/teams/{team}/members/{user}", "removeTeamMember", remove_member,
     permission::team_members_write, resource_kind::team},
    {http::verb::get, "/teams/{team}/models", "listModels", list_models, permission::team_contents_read,
     resource_kind::team},
    {http::verb::post, "/teams/{team}/models", "createModel", create_model, permission::model_create,
     resource_kind::team},
    {http::verb::get, "/teams/{team}/models/{model}", "getModel", get_model, permission::model_read,
     resource_kind::model},
    {http::verb::patch, "/teams/{team}/models/{model}", "updateModel", update_model, permission::model_update,
     resource_kind::model},
    {http::verb::get, "/teams/{team}/models/{model}/history", "listModelHistory", model_history,
     permission::model_history_read, resource_kind::model},
    {http::verb::get, "/teams/{team}/models/{model}/versions", "listVersions", list_versions,
     permission::model_history_read, resource_kind::model},
    {http::verb::post, "/teams/{team}/models/{model}/versions", "createVersion", create_version,
     permission::version_create, resource_kind::model},
    {http::verb::get, "/teams/{team}/models/{model}/versions/{version}", "getVersion", get_version,
     permission::model_read, resource_kind::model},
    {http::verb::get, "/teams/{team}/models/{model}/versions/{version}/files", "listVersionFiles",
     list_version_files, permission::model_read, resource_kind::model},
    {http::verb::get, "/teams/{team}/models/{model}/versions/{version}/manifest", "getVersionManifest",
     get_version_manifest, permission::model_read, resource_kind::model},
    {http::verb::get, "/teams/{team}/models/{model}/versions/{version}/download-link", "getFileDownloadLink",
     get_file_download_link, permission::model_read, resource_kind::model},
    {http::verb::get, "/teams/{team}/models/{model}/versions/{version}/diff", "diffVersions", diff_versions,
     permission::model_history_read, resource_kind::model},
    {http::verb::get, "/teams/{team}/models/{model}/versions/{version}/history", "listVersionHistory",
     version_history, permission::model_history_read, resource_kind::model},
    {http::verb::post, "/teams/{team}/models/{model}/versions/{version}/submit", "submitVersion",
     submit_version, permission::version_create, resource_kind::model},
    {http::verb::post, "/teams/{team}/models/{model}/versions/{version}/approve", "approveVersion",
     approve_version, permission::version_review, resource_kind::model},
    {http::verb::post, "/teams/{team}/models/{model}/versions/{version}/reject", "rejectVersion",
     reject_version, permission::version_review, resource_kind::model},
    {http::verb::post, "/teams/{team}/models/{model}/versions/{version}/deprecate", "deprecateVersion",
     deprecate_version, permission::version_retire, resource_kind::model},
    {http::verb::post, "/teams/{team}/models/{model}/versions/{version}/archive", "archiveVersion",
     archive_version, permission::version_retire, resource_kind::model},
    {http::verb::get, "/teams/{team}/models/{model}/aliases", "listAliases", list_aliases,
     permission::model_history_read, resource_kind::model},
    {http::verb::get, "/teams/{team}/models/{model}/aliases/{alias}", "getAlias", get_alias,
     permission::model_read, resource_kind::model},
    {http::verb::put, "/teams/{team}/models/{model}/aliases/{alias}", "setAlias", set_alias,
     permission::alias_write, resource_kind::model},
    {http::verb::delete_, "/teams/{team}/models/{model}/aliases/{alias}", "deleteAlias", delete_alias,
     permission::alias_write, resource_kind::model},
    {http::verb::get, "/teams/{team}/models/{model}/warmups", "listWarmups", list_warmups,
     permission::model_history_read, resource_kind::model},
    {http::verb::post, "/teams/{team}/models/{model}/warmups", "createWarmup", create_warmup,
     permission::version_create, resource_kind::model},
    {http::verb::get, "/teams/{team}/models/{model}/warmups/{warmup}", "getWarmup", get_warmup,
     permission::model_history_read, resource_kind::model},
    {http::verb::get, "/teams/{team}/models/{model}/warmup-policy", "getModelWarmupPolicy",
     get_model_warmup_policy, permission::model_history_read, resource_kind::model},
    {http::verb::put, "/teams/{team}/models/{model}/warmup-policy", "setModelWarmupPolicy",
     set_model_warmup_policy, permission::model_policy_write, resource_kind::model},
    {http::verb::get, "/teams/{team}/warmup-policy", "getTeamWarmupPolicy", get_team_warmup_policy,
     permission::team_contents_read, resource_kind::team},
    {http::verb::put, "/teams/{team}/warmup-policy", "setTeamWarmupPolicy", set_team_warmup_policy,
     permission::team_policy_write, resource_kind::team},
    {http::verb::get, "/teams/{team}/webhooks", "listWebhooks", list_webhooks, permission::webhooks_read,
     resource_kind::team},
    {http::verb::post, "/teams/{team}/webhooks", "createWebhook", create_webhook, permission::webhooks_write,
     resource_kind::team},
    {http::verb::get, "/teams/{team}/webhooks/{webhook}", "getWebhook", get_webhook,
     permission::webhooks_read, resource_kind::team},
    {http::verb::patch, "/teams/{team}/webhooks/{webhook}", "updateWebhook", update_webhook,
     permission::webhooks_write, resource_kind::team},
    {http::verb::delete_, "/teams/{team}/webhooks/{webhook}", "deleteWebhook", delete_webhook,
     permission::webhooks_write, resource_kind::team},
    {http::verb::post, "/teams/{team}/webhooks/{webhook}/rotate", "rotateWebhookSecret",
     rotate_webhook_secret, permission::webhooks_write, resource_kind::team},
    {http::verb::post, "/teams/{team}/webhooks/{webhook}/ping", "pingWebhook", ping_webhook,
     permission::webhooks_write, resource_kind::team},
    {http::verb::get, "/teams/{team}/webhooks/{webhook}/deliveries", "listWebhookDeliveries",
     list_webhook_deliveries, permission::webhooks_read, resource_kind::team},
    {http::verb::get, "/teams/{team}/webhooks/{webhook}/deliveries/{delivery}", "getWebhookDelivery",
     get_webhook_delivery, permission::webhooks_read, resource_kind::team},
    {http::verb::post, "/teams/{team}/webhooks/{webhook}/deliveries/{delivery}/redeliver", "redeliverWebhook",
     redeliver_webhook, permission::webhooks_write, resource_kind::team},
}};

std::vector<std::string_view> split(std::string_view path)
{
    std::vector<std::string_view> out;
    while (!path.empty()) {
        path.remove_prefix(1); // the '/'
        auto slash = path.find('/');
        out.push_back(path.substr(0, slash));
        path = slash == std::string_view::npos ? std::string_view() : path.substr(slash);
    }
    return out;
}

/// Matches a percent-decoded path below /api/v1 against a pattern.
bool match(std::string_view pattern, const std::vector<std::string_view>& segments, path_params& params)
{
    auto parts = split(pattern);
    if (parts.size() != segments.size())
        return false;
    params.clear();
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (parts[i].starts_with('{')) {
            if (segments[i].empty())
                return false;
            params.emplace_back(parts[i].substr(1, parts[i].size() - 2), std::string(segments[i]));
        } else if (parts[i] != segments[i]) {
            return false;
        }
    }
    return true;
}

bool is_safe(http::verb m) noexcept
{
    return m == http::verb::get || m == http::verb::head;
}

/// A console session cookie (api/sessions.cpp). A request that changes something must also prove it comes
/// from the console's own page: an Origin header, when the browser sends one, naming this server, and the
/// session's CSRF token in X-Depot-CSRF (a header another site's page cannot set on a cross-site request
/// without a CORS preflight, which depotd never grants). SECURITY.md explains the choice.
asio::awaitable<result<bool>> authenticate_session(request_context& ctx, std::string_view cookie)
{
    auto s = co_await ctx.svc->credentials.authenticate_session(cookie);
    if (!s) {
        record_auth_failure(ctx);
        co_return false;
    }
    ctx.who = caller_of(*s);
    if (!is_safe(ctx.header->method())) {
        auto origin = ctx.get("origin");
        if (origin && *origin != own_origin(ctx))
            co_return make_error(errc::access_denied,
                                 "A console session may change something only from the console's own origin");
        auto csrf = ctx.get("x-depot-csrf");
        if (!csrf || !constant_time_equal(*csrf, s->csrf_token))
            co_return make_error(errc::access_denied,
                                 "A console session request that changes something needs "
                                 "the session's X-Depot-CSRF header");
    }
    co_return true;
}

/// Fills ctx.who from a bearer token or a SigV4 signature. Returns false (and sets `failure`) when the
/// request is not authenticated.
asio::awaitable<result<bool>> authenticate_api(request_context& ctx)
{
    // A presigned URL is S3's: a link that does one thing to one object. Here its holder would choose the
    // body (a presigned POST /tokens mints a token each time it is sent), so a signature in the query is
    // refused before anything is looked up.
    if (ctx.has_param("X-Amz-Signature") || ctx.has_param("X-Amz-Credential") || ctx.has_param("Signature") ||
        ctx.has_param("AWSAccessKeyId"))
        co_return make_error(errc::access_denied,
                             "The REST API takes an API token, a signature in the Authorization header or a "
                             "console session; a presigned URL (a signature in the query) is S3's");
    if (auto header = ctx.get("authorization"); header && header->starts_with("Bearer ")) {
        co_return co_await authenticate_bearer(ctx, header->substr(7));
    }
    // The session cookie only where the console is: the browser also sends it to the S3 listener (cookies
    // ignore ports), whose origin serves what users store.
    if (ctx.on_console_listener() && ctx.header->find(http::field::authorization) == ctx.header->end())
        if (auto cookie = session_cookie(ctx))
            co_return co_await authenticate_session(ctx, *cookie);
    auto signed_request = co_await authenticate(ctx);
    if (!signed_request)
        co_return std::move(signed_request).error();
    // A signature that leaves the body out would let whoever saw the request send it again with a body of
    // their own (a token of any scope, an approval): a signed change names its body's SHA-256.
    const auto method = ctx.header->method();
    if (signed_request->has_value() && method != http::verb::get && method != http::verb::head &&
        ctx.payload.sha256.empty())
        co_return make_error(errc::access_denied,
                             "A signed REST request that changes something signs its body: send "
                             "x-amz-content-sha256 with the body's SHA-256 (not UNSIGNED-PAYLOAD, and not "
                             "SigV2, which signs no body)");
    co_return signed_request->has_value();
}

response unauthenticated(std::string_view instance, std::string_view request_id)
{
    json::object body{{"type", "urn:depot:problem:unauthenticated"},
                      {"title", "Unauthenticated"},
                      {"status", 401},
                      {"detail", "This call needs an API token (Authorization: Bearer dpt_...), a SigV4 "
                                 "signature from an active access key, or a live console session."},
                      {"instance", instance},
                      {"request_id", request_id}};
    auto res = json_response(body, http::status::unauthorized);
    res.headers.set(http::field::content_type, "application/problem+json");
    res.headers.set(http::field::www_authenticate, "Bearer realm=\"depot\"");
    return res;
}

/// The answer while the client's address cools down after too many failed authentications: 429 (the
/// REST convention for "slow down"), with Retry-After.
response too_many_auth_failures(std::string_view instance, std::string_view request_id,
                                std::chrono::seconds wait)
{
    json::object body{{"type", "urn:depot:problem:too-many-auth-failures"},
                      {"title", "TooManyAuthenticationFailures"},
                      {"status", 429},
                      {"detail", "Too many failed authentications from your address; retry in " +
                                     std::to_string(wait.count()) + " s."},
                      {"instance", instance},
                      {"request_id", request_id}};
    auto res = json_response(body, http::status::too_many_requests);
    res.headers.set(http::field::content_type, "application/problem+json");
    res.headers.set(http::field::retry_after, std::to_string(wait.count()));
    return res;
}

} // namespace

bool is_api_target(std::string_view target) noexcept
{
    auto path = target.substr(0, target.find('?'));
    return path == root || (path.starts_with(root) && path[root.size()] == '/');
}

std::vector<std::string> route_list()
{
    std::vector<std::string> out;
    for (const auto& r : routes)
        out.push_back(std::string(http::to_string(r.method)) + " " + std::string(root) +
                      std::string(r.pattern));
    return out;
}

std::vector<route_permission_entry> route_permissions()
{
    std::vector<route_permission_entry> out;
    for (const auto& r : routes)
        out.push_back({.route = std::string(http::to_string(r.method)) + " " + std::string(root) +
                                std::string(r.pattern),
                       .read_method = r.method == http::verb::get || r.method == http::verb::head,
                       .permission = r.permission.value});
    return out;
}

std::vector<std::string_view> operation_ids()
{
    std::vector<std::string_view> out;
    for (const auto& r : routes)
        out.push_back(r.name);
    return out;
}

asio::awaitable<response> dispatch(request_context& ctx, std::optional<std::size_t>& route_index,
                                   bool& denial_audited)
{
    (void)take_refusal(ctx); // nothing recorded before this request started counts
    const auto started = std::chrono::steady_clock::now();
    auto target = ctx.header->target();
    std::string_view raw(target.data(), target.size());
    const std::string_view path = raw.substr(0, raw.find('?'));
    std::string_view operation = "Unknown";

    std::optional<error> failure;
    std::optional<response> res;
    path_params params;
    try {
        // Route first (a 404/405 needs no credentials to tell), then authenticate, then run.
        std::vector<std::string> decoded;
        bool bad_encoding = false;
        if (auto qmark = raw.find('?'); qmark != std::string_view::npos) {
            auto q = parse_query(raw.substr(qmark + 1));
            if (q)
                ctx.query = std::move(*q);
            else
                bad_encoding = true;
        }
        for (auto s : split(path.substr(root.size()))) {
            auto d = uri_decode(s);
            if (!d) {
                bad_encoding = true;
                break;
            }
            decoded.push_back(std::move(*d));
        }
        // Path parameters and query values are looked up in PostgreSQL, which holds text as UTF-8 without
        // NUL: anything else is refused before authentication (itself a query) runs.
        bool bad_text = false;
        for (const auto& d : decoded)
            bad_text = bad_text || !s3::is_storable_text(d);
        for (const auto& [name, value] : ctx.query)
            bad_text = bad_text || !s3::is_storable_text(name) || !s3::is_storable_text(value);
        std::vector<std::string_view> segments(decoded.begin(), decoded.end());
        const route* found = nullptr;
        bool path_known = false;
        if (!bad_encoding)
            for (const auto& r : routes)
                if (match(r.pattern, segments, params)) {
                    path_known = true;
                    if (r.method == ctx.header->method()) {
                        found = &r;
                        break;
                    }
                }
        if (found)
            match(found->pattern, segments, params);

        if (bad_encoding) {
            failure = make_error(errc::invalid_argument, "The request path has an invalid percent-encoding");
        } else if (bad_text) {
            failure = make_error(errc::invalid_argument,
                                 "The request path and query must be valid UTF-8 without NUL once decoded");
        } else if (!path_known) {
            failure = make_error(errc::not_found, "No such API resource");
        } else if (!found) {
            failure = make_error(errc::method_not_allowed, "The method is not allowed on this resource");
        } else {
            operation = found->name;
            route_index = static_cast<std::size_t>(found - routes.data());
            const std::optional<std::chrono::seconds> cooldown = auth_cooldown(ctx);
            // Signing in authenticates from the body (the handler checks the credential it names).
            const bool sign_in = found->resource.value == resource_kind::sign_in;
            // A body that is not declared JSON is refused before anything (http_api.hpp).
            auto not_json = refuse_unless_json_body(ctx, path);
            result<bool> authed = false;
            if (!cooldown && !sign_in && !not_json)
                authed = co_await authenticate_api(ctx);
            if (cooldown) {
                res = too_many_auth_failures(path, ctx.request_id, *cooldown);
            } else if (not_json) {
                res = std::move(*not_json);
            } else if (sign_in) {
                // Unauthenticated by design: the handler checks the credential its body names.
                auto proof =
                    authorization_step::unauthenticated(found->permission.value, found->resource.value);
                if (!proof) {
                    failure = std::move(proof).error();
                } else {
                    auto r = co_await run_handler(*found, *proof, ctx, params);
                    if (r)
                        res = std::move(*r);
                    else
                        failure = std::move(r).error();
                }
            } else if (!authed) {
                failure = std::move(authed).error();
            } else if (!*authed) {
                res = unauthenticated(path, ctx.request_id);
            } else if (!ctx.svc->limiter.admit(ctx.who.access_key_id)) {
                failure = make_error(errc::rate_limited, "Please reduce your request rate.");
            } else {
                ctx.audit = audit_context_of(ctx);
                co_await resolve_principal(ctx);
                ctx.permission = found->permission.value;
                auto proof = co_await authorization_step::rest(ctx, ctx.permission, found->resource, params);
                if (!proof) {
                    failure = std::move(proof).error();
                } else {
                    auto r = co_await run_handler(*found, *proof, ctx, params);
                    if (r)
                        res = std::move(*r);
                    else
                        failure = std::move(r).error();
                }
            }
        }
    } catch (const std::exception& e) {
        failure = error_from_exception(e, ctx.request_id);
    }
    // Every refusal of an authenticated caller is an audit row: a 403, and a refusal answered 404 because
    // the caller may not learn that the team or bucket exists (take_refusal), with the team and bucket it
    // was aimed at, so that the team's admins read it.
    // A named value, not a braced temporary in the co_await (GCC 12 frees such a temporary twice).
    refused_request addressed;
    addressed.action = "api." + std::string(operation);
    addressed.resource = std::string(path.substr(root.size()));
    addressed.team = std::string(path_param(params, "team"));
    addressed.bucket = std::string(path_param(params, "bucket"));
    if (co_await audit_refusal(ctx, failure, std::move(addressed)))
        denial_audited = true;
    if (failure)
        res = problem_response(*failure, path, ctx.request_id);
    res->headers.set("x-request-id", ctx.request_id);

    auto elapsed =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
    // The access log line (status, bytes, duration) is written by the caller once the response is sent;
    // this adds the REST route and error at debug level.
    log::debug("rest call", {{"request_id", ctx.request_id},
                             {"remote", ctx.remote},
                             {"operation", std::string(operation)},
                             {"method", std::string(ctx.header->method_string())},
                             {"path", std::string(path)},
                             {"status", static_cast<int>(res->status)},
                             {"error", failure ? std::string(to_string(failure->code)) : std::string()},
                             {"caller", ctx.who.access_key_id},
                             {"us", static_cast<long long>(elapsed.count())}});
    co_return std::move(*res);
}

} // namespace depot::server::api
