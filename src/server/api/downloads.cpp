// REST handler getFileDownloadLink: one file of a model version as a presigned GET URL that is valid briefly
// (the console's download button). Authorized like reading the version (permission model_read on the path,
// scopes included: api.cpp checks the credential's scope against team, model and version first); the URL is
// signed by the team's event-link key (webhooks/manifest.hpp), which reads that team's models only, and the
// link is audited under the caller (model.download_link) before the download itself is (model.download).
#include "common/hash.hpp"
#include "registry/service/audit.hpp"
#include "registry/service/model_registry.hpp"
#include "server/api/http_api.hpp"
#include "server/api/model_access.hpp"
#include "server/audit_requests.hpp"
#include "server/services.hpp"
#include "server/webhooks/manifest.hpp"

#include <algorithm>

namespace depot::server::api {
namespace {

constexpr std::int64_t default_link_lifetime = 300;

result<std::int64_t> link_lifetime(const request_context& ctx)
{
    auto v = ctx.param("expires_in");
    if (!v)
        return default_link_lifetime;
    std::int64_t n = 0;
    for (char c : *v) {
        if (c < '0' || c > '9' || n > max_link_lifetime.count())
            return make_error(errc::invalid_argument,
                              "expires_in must be an integer from 1 to 3600 (seconds)", "expires_in");
        n = n * 10 + (c - '0');
    }
    if (v->empty() || n < 1 || n > max_link_lifetime.count())
        return make_error(errc::invalid_argument, "expires_in must be an integer from 1 to 3600 (seconds)",
                          "expires_in");
    return n;
}

} // namespace

std::chrono::seconds link_lifetime_for(const request_context& ctx, std::chrono::seconds wanted)
{
    auto lifetime = std::min(wanted, max_link_lifetime);
    if (ctx.who.expires_at) {
        const auto left = std::chrono::duration_cast<std::chrono::seconds>(*ctx.who.expires_at -
                                                                           std::chrono::system_clock::now());
        lifetime = std::clamp(left, std::chrono::seconds(1), lifetime);
    }
    return lifetime;
}

asio::awaitable<result<response>> get_file_download_link(request_context& ctx, const path_params& params)
{
    auto path = ctx.param("path");
    if (!path || path->empty())
        co_return make_error(errc::invalid_argument, "Name the file: ?path=<path in the version>", "path");
    if (path->size() > 1024)
        co_return make_error(errc::invalid_argument, "path is longer than 1024 bytes", "path");
    auto lifetime = link_lifetime(ctx);
    if (!lifetime)
        co_return std::move(lifetime).error();

    auto va = co_await version_for(ctx, params);
    if (!va)
        co_return std::move(va).error();
    const registry::model* m = &va->model.model;
    const registry::model_version* v = &va->version;
    auto files = co_await ctx.svc->models.files(v->id, *path, 1, true);
    if (files.empty() || files.front().path != *path)
        co_return make_error(errc::not_found, "The version has no file at this path", "path");
    const auto& file = files.front();

    auto key = co_await webhooks::team_link_key(*ctx.svc, m->team_id, m->team);
    if (!key)
        co_return make_error(errc::internal, "The team's link key could not be made");
    const auto now = std::chrono::system_clock::now();
    const auto expiry = link_lifetime_for(ctx, std::chrono::seconds(*lifetime));
    *lifetime = expiry.count();
    const std::string url = webhooks::presigned_file_url(
        ctx.svc->opts, *key, {m->team, m->name, v->number, file.path}, expiry, now);

    {
        const std::string resource =
            m->team + "/" + m->name + "/" + std::to_string(v->number) + "/" + file.path;
        const std::string details = "{\"model\":" + registry::audit_quote(m->team + "/" + m->name) +
                                    ",\"version\":" + std::to_string(v->number) +
                                    ",\"path\":" + registry::audit_quote(file.path) +
                                    ",\"expires_in\":" + std::to_string(*lifetime) + "}";
        co_await registry::audit_log::record_download_link(*ctx.svc->db, ctx.audit, resource, m->team,
                                                           details);
    }

    json::object body{{"path", file.path},
                      {"size", file.size},
                      {"url", url},
                      {"expires_in", *lifetime},
                      {"expires_at", iso8601(now + expiry)}};
    body["sha256"] =
        file.sha256.empty() ? json::value(nullptr) : json::value(json::string(to_hex(file.sha256)));
    auto res = json_response(body);
    res.headers.set(http::field::cache_control, "no-store");
    co_return res;
}

} // namespace depot::server::api
