#pragma once
/// \file
/// What REST handlers share: the route signature, JSON bodies in and out, problem responses, and the
/// checks every handler makes on its inputs.

#include "common/result.hpp"
#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace depot::registry {
struct bucket;
}

namespace depot::server::api {

namespace asio = boost::asio;
namespace json = boost::json;

/// Values of the `{name}` segments of the matched route, in order.
using path_params = std::vector<std::pair<std::string_view, std::string>>;

using handler = asio::awaitable<result<response>> (*)(request_context&, const path_params&);

std::string_view path_param(const path_params& params, std::string_view name);

/// The console's session cookie (api/sessions.cpp) and its value in the request's Cookie header, if any.
inline constexpr std::string_view session_cookie_name = "depot_session";
std::optional<std::string_view> session_cookie(const request_context& ctx);

/// The scheme and authority this server is reached at by this request, as a browser's Origin header names
/// it (the console's own origin on the console's listener).
std::string own_origin(const request_context& ctx);

response json_response(const json::value& body, http::status status = http::status::ok);

/// The problem document of an error: type urn:depot:problem:<code>, title, status, detail, instance, and
/// the request id.
response problem_response(const error& err, std::string_view instance, std::string_view request_id);

/// Whether a Content-Type value names JSON: `application/json` in any case, parameters allowed
/// (`application/json; charset=utf-8`).
bool is_json_media_type(std::string_view content_type) noexcept;

/// `text` as a JSON object whose strings are UTF-8 without NUL (what PostgreSQL can store) and whose
/// objects, at every depth, name each member once. invalid_argument naming the problem otherwise: a
/// duplicate key is refused, not resolved (Boost.JSON keeps the last), because two readers of one body
/// must never see different values (a cross-site text/plain form smuggles `"token":"=","token":"dpt_..."`).
result<json::object> parse_json_object(std::string_view text);

/// REST bodies are JSON, and say so: a request that carries a body (Content-Length above 0, or chunked)
/// must declare it with exactly one Content-Type that is_json_media_type accepts. Otherwise the 415 problem
/// (urn:depot:problem:unsupported-media-type) that api.cpp answers before the body is read or the caller
/// authenticated: a cross-site form cannot send this type, and a script only after a CORS preflight,
/// which depotd never grants. nullopt when the request may go on.
std::optional<response> refuse_unless_json_body(const request_context& ctx, std::string_view instance);

/// The one way REST handlers read a JSON body (its type was checked by refuse_unless_json_body): at most
/// `limit` bytes, verifying a signed payload hash, parsed by parse_json_object.
asio::awaitable<result<json::object>> read_json_object(request_context& ctx, std::size_t limit = 1 << 20);

/// Field accessors that name the field in their error.
result<std::string> string_field(const json::object& o, std::string_view name, bool required = true);
result<std::int64_t> integer_field(const json::object& o, std::string_view name, std::int64_t min,
                                   std::int64_t max);
/// A 64-character hex SHA-256 as 32 raw bytes.
result<std::string> sha256_of(std::string_view hex, std::string_view field);
/// Refuses members other than `allowed` (a typo must not be silently ignored).
result<void> only_fields(const json::object& o, std::initializer_list<std::string_view> allowed);

/// The bucket if the caller may use it; no_such_bucket for another owner's bucket as for a missing one, so
/// a caller learns nothing about buckets that are not theirs. The authorization step decides a {bucket}
/// route's bucket with it (its handler reads route_bucket); a handler calls it only for a bucket its body
/// names (a model's, a restore's target, a webhook's filter).
asio::awaitable<result<registry::bucket>> caller_bucket(request_context& ctx, std::string_view name);
/// caller_bucket decided with the bucket's policy too (authorize_bucket_rest): the AWS action the request
/// counts as ("" for none), about `key` ("" for a bucket action). access_denied when the policy denies it.
asio::awaitable<result<registry::bucket>> caller_bucket(request_context& ctx, std::string_view name,
                                                        std::string_view action, std::string_view key = {});

std::string iso8601(std::chrono::system_clock::time_point t);

// Handlers (one file per resource).
asio::awaitable<result<response>> whoami(request_context&, const path_params&);
// Console sessions (sessions.cpp). createSession authenticates from its body, not from the request.
asio::awaitable<result<response>> create_session(request_context&, const path_params&);
asio::awaitable<result<response>> get_current_session(request_context&, const path_params&);
asio::awaitable<result<response>> delete_current_session(request_context&, const path_params&);
asio::awaitable<result<response>> lookup_content(request_context&, const path_params&);
asio::awaitable<result<response>> create_object_from_digest(request_context&, const path_params&);
asio::awaitable<result<response>> get_bucket(request_context&, const path_params&);
asio::awaitable<result<response>> update_bucket(request_context&, const path_params&);
asio::awaitable<result<response>> bucket_usage(request_context&, const path_params&);
asio::awaitable<result<response>> owner_usage(request_context&, const path_params&);

// Snapshots (snapshots.cpp).
asio::awaitable<result<response>> create_snapshot(request_context&, const path_params&);
asio::awaitable<result<response>> list_snapshots(request_context&, const path_params&);
asio::awaitable<result<response>> get_snapshot(request_context&, const path_params&);
asio::awaitable<result<response>> delete_snapshot(request_context&, const path_params&);
asio::awaitable<result<response>> restore_snapshot(request_context&, const path_params&);

// The model registry (teams.cpp, models.cpp, model_versions.cpp, aliases.cpp).
asio::awaitable<result<response>> list_teams(request_context&, const path_params&);
asio::awaitable<result<response>> create_team(request_context&, const path_params&);
asio::awaitable<result<response>> get_team(request_context&, const path_params&);
asio::awaitable<result<response>> list_members(request_context&, const path_params&);
asio::awaitable<result<response>> set_member(request_context&, const path_params&);
asio::awaitable<result<response>> remove_member(request_context&, const path_params&);
asio::awaitable<result<response>> list_models(request_context&, const path_params&);
asio::awaitable<result<response>> create_model(request_context&, const path_params&);
asio::awaitable<result<response>> get_model(request_context&, const path_params&);
asio::awaitable<result<response>> update_model(request_context&, const path_params&);
asio::awaitable<result<response>> model_history(request_context&, const path_params&);
asio::awaitable<result<response>> list_versions(request_context&, const path_params&);
asio::awaitable<result<response>> create_version(request_context&, const path_params&);
asio::awaitable<result<response>> get_version(request_context&, const path_params&);
asio::awaitable<result<response>> list_version_files(request_context&, const path_params&);
asio::awaitable<result<response>> get_version_manifest(request_context&, const path_params&);
/// One file as a short-lived presigned URL (downloads.cpp).
asio::awaitable<result<response>> get_file_download_link(request_context&, const path_params&);
asio::awaitable<result<response>> diff_versions(request_context&, const path_params&);
asio::awaitable<result<response>> submit_version(request_context&, const path_params&);
asio::awaitable<result<response>> approve_version(request_context&, const path_params&);
asio::awaitable<result<response>> reject_version(request_context&, const path_params&);
asio::awaitable<result<response>> deprecate_version(request_context&, const path_params&);
asio::awaitable<result<response>> archive_version(request_context&, const path_params&);
asio::awaitable<result<response>> version_history(request_context&, const path_params&);
asio::awaitable<result<response>> list_aliases(request_context&, const path_params&);
asio::awaitable<result<response>> get_alias(request_context&, const path_params&);
asio::awaitable<result<response>> set_alias(request_context&, const path_params&);
asio::awaitable<result<response>> delete_alias(request_context&, const path_params&);

// Webhooks (webhooks.cpp).
asio::awaitable<result<response>> list_webhooks(request_context&, const path_params&);
asio::awaitable<result<response>> create_webhook(request_context&, const path_params&);
asio::awaitable<result<response>> get_webhook(request_context&, const path_params&);
asio::awaitable<result<response>> update_webhook(request_context&, const path_params&);
asio::awaitable<result<response>> delete_webhook(request_context&, const path_params&);
asio::awaitable<result<response>> rotate_webhook_secret(request_context&, const path_params&);
asio::awaitable<result<response>> ping_webhook(request_context&, const path_params&);
asio::awaitable<result<response>> list_webhook_deliveries(request_context&, const path_params&);
asio::awaitable<result<response>> get_webhook_delivery(request_context&, const path_params&);
asio::awaitable<result<response>> redeliver_webhook(request_context&, const path_params&);

// Credentials and the audit log (access.cpp).
asio::awaitable<result<response>> create_token(request_context&, const path_params&);
asio::awaitable<result<response>> list_tokens(request_context&, const path_params&);
asio::awaitable<result<response>> revoke_token(request_context&, const path_params&);
asio::awaitable<result<response>> create_key(request_context&, const path_params&);
asio::awaitable<result<response>> list_keys(request_context&, const path_params&);
asio::awaitable<result<response>> revoke_key(request_context&, const path_params&);
asio::awaitable<result<response>> list_audit(request_context&, const path_params&);
// Users, installation admins only (users.cpp).
asio::awaitable<result<response>> list_users(request_context&, const path_params&);
asio::awaitable<result<response>> create_user(request_context&, const path_params&);
// Warm-up jobs and policy (warmups.cpp).
asio::awaitable<result<response>> create_warmup(request_context&, const path_params&);
asio::awaitable<result<response>> list_warmups(request_context&, const path_params&);
asio::awaitable<result<response>> get_warmup(request_context&, const path_params&);
asio::awaitable<result<response>> get_team_warmup_policy(request_context&, const path_params&);
asio::awaitable<result<response>> set_team_warmup_policy(request_context&, const path_params&);
asio::awaitable<result<response>> get_model_warmup_policy(request_context&, const path_params&);
asio::awaitable<result<response>> set_model_warmup_policy(request_context&, const path_params&);

} // namespace depot::server::api
