// The Hub API's router (hf.hpp): which requests are its, the route table, bearer-token authentication, and
// the one place where errors and exceptions become Hub-shaped answers.
#include "server/hf/hf.hpp"

#include "common/log.hpp"
#include "common/uri.hpp"
#include "s3/utf8.hpp"
#include "server/api/api.hpp"
#include "server/audit_requests.hpp"
#include "server/authenticate.hpp"
#include "server/authorization.hpp"
#include "server/errors.hpp"
#include "server/hf/repo.hpp"
#include "server/pipeline.hpp"
#include "server/services.hpp"

#include <algorithm>
#include <array>
#include <boost/asio/this_coro.hpp>
#include <boost/json.hpp>
#include <chrono>

namespace depot::server::hf {
namespace {

struct route
{
    http::verb method;
    std::string_view pattern; ///< `{name}` matches one non-empty segment; a final `{path+}` the rest
    std::string_view name;    ///< for metrics, the access log and denial audit rows (hf.<name>)
    guarded<handler> fn;      ///< callable only with the authorization step's proof (server/pipeline.hpp)
    auth::route_permission permission; ///< what the request does (auth/authorize.hpp); required
    route_resource resource;           ///< what it acts on (server/pipeline.hpp); required
};

constexpr std::array<route, 7> routes = {{
    {http::verb::get, "/api/models/{team}/{model}", "HfModelInfo", model_info, auth::permission::hf_read,
     resource_kind::model},
    {http::verb::get, "/api/models/{team}/{model}/revision/{revision}", "HfModelInfo", model_info,
     auth::permission::hf_read, resource_kind::model},
    {http::verb::get, "/api/models/{team}/{model}/tree/{revision}", "HfListTree", list_tree,
     auth::permission::hf_read, resource_kind::model},
    {http::verb::get, "/api/models/{team}/{model}/tree/{revision}/{path+}", "HfListTree", list_tree,
     auth::permission::hf_read, resource_kind::model},
    {http::verb::post, "/api/models/{team}/{model}/paths-info/{revision}", "HfPathsInfo", paths_info,
     auth::permission::hf_read, resource_kind::model},
    {http::verb::get, "/{team}/{model}/resolve/{revision}/{path+}", "HfResolve", resolve_file,
     auth::permission::hf_read, resource_kind::model},
    {http::verb::head, "/{team}/{model}/resolve/{revision}/{path+}", "HfResolveHead", resolve_file_head,
     auth::permission::hf_read, resource_kind::model},
}};

std::vector<std::string_view> split(std::string_view path)
{
    std::vector<std::string_view> out;
    while (!path.empty()) {
        path.remove_prefix(1);
        auto slash = path.find('/');
        out.push_back(path.substr(0, slash));
        path = slash == std::string_view::npos ? std::string_view() : path.substr(slash);
    }
    return out;
}

/// Matches the decoded segments against a pattern, filling the request's parameters.
bool match(std::string_view pattern, const std::vector<std::string>& segments, hub_request& req)
{
    auto parts = split(pattern);
    const bool rest = !parts.empty() && parts.back() == "{path+}";
    if (rest ? segments.size() < parts.size() : segments.size() != parts.size())
        return false;
    hub_request out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const auto& part = parts[i];
        if (part == "{path+}") {
            for (std::size_t j = i; j < segments.size(); ++j) {
                if (segments[j].empty() || segments[j] == "." || segments[j] == "..")
                    return false;
                out.path += (j > i ? "/" : "") + segments[j];
            }
            break;
        }
        if (part.starts_with('{')) {
            if (segments[i].empty())
                return false;
            if (part == "{team}")
                out.team = segments[i];
            else if (part == "{model}")
                out.model = segments[i];
            else if (part == "{revision}")
                out.revision = segments[i];
        } else if (part != segments[i]) {
            return false;
        }
    }
    req = std::move(out);
    return true;
}

/// The Hub's error answer: JSON {"error": message}, X-Error-Code and X-Error-Message.
response hub_error(http::status status, std::string_view code, std::string_view message, bool head)
{
    response res;
    res.status = status;
    if (!code.empty())
        res.headers.set("X-Error-Code", code);
    std::string header_message;
    for (char c : message)
        header_message +=
            (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) ? ' ' : c;
    res.headers.set("X-Error-Message", header_message);
    res.headers.set(http::field::content_type, "application/json; charset=utf-8");
    res.body = boost::json::serialize(boost::json::object{{"error", message}});
    if (head) {
        res.headers.set(http::field::content_length, std::to_string(res.body.size()));
        res.body.clear();
        res.head_only = true;
    }
    return res;
}

response error_response(const error& err, const hub_request& req, bool head)
{
    switch (err.code) {
    case errc::no_such_bucket:
        return hub_error(http::status::not_found, "RepoNotFound", err.message, head);
    case errc::no_such_version:
        return hub_error(http::status::not_found, "RevisionNotFound", err.message, head);
    case errc::no_such_key: {
        // With the commit, `huggingface_hub` remembers the file is absent at that commit (.no_exist).
        auto res = hub_error(http::status::not_found, "EntryNotFound", err.message, head);
        if (!req.commit.empty())
            res.headers.set("X-Repo-Commit", req.commit);
        return res;
    }
    case errc::access_denied:
        return hub_error(http::status::forbidden, "", err.message, head);
    case errc::invalid_argument:
    case errc::invalid_request:
        return hub_error(http::status::bad_request, "", err.message, head);
    case errc::too_large:
        return hub_error(http::status::payload_too_large, "", err.message, head);
    case errc::rate_limited:
        return hub_error(http::status::too_many_requests, "", err.message, head);
    case errc::unavailable:
        return hub_error(http::status::service_unavailable, "", err.message, head);
    default:
        return hub_error(http::status::internal_server_error, "", err.message, head);
    }
}

} // namespace

std::vector<route_permission_entry> route_permissions()
{
    std::vector<route_permission_entry> out;
    for (const auto& r : routes)
        out.push_back({.route = std::string(http::to_string(r.method)) + " " + std::string(r.pattern),
                       .read_method = r.method == http::verb::get || r.method == http::verb::head,
                       .permission = r.permission.value});
    return out;
}

std::vector<std::string_view> operation_names()
{
    std::vector<std::string_view> out;
    for (const auto& r : routes)
        if (std::find(out.begin(), out.end(), r.name) == out.end())
            out.push_back(r.name);
    return out;
}

asio::awaitable<response> dispatch(request_context& ctx, std::optional<std::size_t>& route_index,
                                   bool& denial_audited)
{
    (void)take_refusal(ctx); // nothing recorded before this request started counts
    auto target = ctx.header->target();
    const std::string_view raw(target.data(), target.size());
    const std::string_view path = raw.substr(0, raw.find('?'));
    const bool head = ctx.header->method() == http::verb::head;
    std::string_view operation = "Unknown";
    hub_request req;
    std::optional<error> failure;
    std::optional<response> res;
    try {
        bool bad = false;
        if (auto qmark = raw.find('?'); qmark != std::string_view::npos) {
            if (auto q = parse_query(raw.substr(qmark + 1)))
                ctx.query = std::move(*q);
            else
                bad = true;
        }
        // Each segment is decoded on its own: a revision "refs/pr/1" arrives as refs%2Fpr%2F1.
        std::vector<std::string> segments;
        for (auto s : split(path)) {
            auto d = uri_decode(s);
            if (!d) {
                bad = true;
                break;
            }
            segments.push_back(std::move(*d));
        }
        // Path segments and query values reach PostgreSQL (team, model, revision, file path): bytes it
        // cannot hold as text are refused before authentication (itself a query) runs, as S3 and REST do.
        bool bad_text = false;
        for (const auto& d : segments)
            bad_text = bad_text || !s3::is_storable_text(d);
        for (const auto& [name, value] : ctx.query)
            bad_text = bad_text || !s3::is_storable_text(name) || !s3::is_storable_text(value);
        const route* found = nullptr;
        if (!bad && !bad_text)
            for (const auto& r : routes)
                if (r.method == ctx.header->method() && match(r.pattern, segments, req)) {
                    found = &r;
                    break;
                }
        if (bad) {
            failure = make_error(errc::invalid_argument, "The request path has an invalid percent-encoding");
        } else if (bad_text) {
            failure = make_error(errc::invalid_argument,
                                 "The request path and query must be valid UTF-8 without NUL once decoded");
        } else if (!found) {
            res = hub_error(http::status::not_found, "", "Not Found", head);
        } else {
            operation = found->name;
            const auto names = operation_names();
            route_index =
                static_cast<std::size_t>(std::find(names.begin(), names.end(), found->name) - names.begin());
            // Authentication: an API token, as dpt_... or hf_dpt_... (registry/service/credentials.hpp).
            auto header = ctx.get("authorization");
            // An address that failed to authenticate too often is refused before its token is looked up,
            // as on S3 (503) and REST (429).
            const std::optional<std::chrono::seconds> cooldown = auth_cooldown(ctx);
            // The pipeline routes only bearer tokens and requests without credentials here.
            bool token = false;
            if (!cooldown && header)
                token = co_await authenticate_bearer(
                    ctx, header->substr(std::min<std::size_t>(7, header->size())));
            if (cooldown) {
                res = hub_error(http::status::too_many_requests, "",
                                "Too many failed authentications from your address; retry in " +
                                    std::to_string(cooldown->count()) + " s.",
                                head);
                res->headers.set(http::field::retry_after, std::to_string(cooldown->count()));
            } else if (!header) {
                // What the Hub answers an anonymous caller for a repo that is private or absent.
                res = hub_error(http::status::unauthorized, "RepoNotFound",
                                "Repository not found: this Depot needs a token (HF_TOKEN=hf_dpt_...)", head);
            } else if (!token) {
                res = hub_error(http::status::unauthorized, "", "Invalid credentials in Authorization header",
                                head);
            } else {
                if (!ctx.svc->limiter.admit(ctx.who.access_key_id)) {
                    failure = make_error(errc::rate_limited, "Please reduce your request rate.");
                } else {
                    ctx.audit = audit_context_of(ctx);
                    co_await resolve_principal(ctx);
                    ctx.permission = found->permission.value;
                    // The route's permission on the model it names, before the handler (which decides again
                    // with what it resolves: the team role, an alias scope's version).
                    auto proof = authorization_step::hub(ctx, ctx.permission, found->resource.value, req.team,
                                                         req.model);
                    if (!proof) {
                        failure = std::move(proof).error();
                    } else {
                        auto r = co_await run_handler(*found, *proof, ctx, req);
                        if (r)
                            res = std::move(*r);
                        else
                            failure = std::move(r).error();
                    }
                }
            }
        }
    } catch (const std::exception& e) {
        failure = error_from_exception(e, ctx.request_id);
    }
    // Every refusal of an authenticated caller is an audit row, RepoNotFound for a team the caller is not
    // in (take_refusal) too, with the team it was aimed at.
    // A named value, not a braced temporary in the co_await (GCC 12 frees such a temporary twice).
    refused_request addressed;
    addressed.action = "hf." + std::string(operation);
    addressed.resource = req.team + "/" + req.model;
    if (!req.revision.empty())
        addressed.resource += "/" + req.revision;
    if (!req.path.empty())
        addressed.resource += "/" + req.path;
    addressed.team = req.team;
    if (co_await audit_refusal(ctx, failure, std::move(addressed)))
        denial_audited = true;
    if (failure)
        res = error_response(*failure, req, head);
    res->headers.set("X-Request-Id", ctx.request_id);
    log::debug("hub api call", {{"request_id", ctx.request_id},
                                {"operation", std::string(operation)},
                                {"path", std::string(path)},
                                {"status", static_cast<int>(res->status)},
                                {"error", failure ? std::string(to_string(failure->code)) : std::string()},
                                {"caller", ctx.who.access_key_id}});
    co_return std::move(*res);
}

} // namespace depot::server::hf
