#include "server/audit_requests.hpp"

#include "common/log.hpp"
#include "registry/snapshot_service.hpp"
#include "registry/sql_util.hpp"
#include "server/services.hpp"

namespace depot::server {

registry::audit_context audit_context_of(const request_context& ctx)
{
    return registry::audit_context{.actor = ctx.who.user_id,
                                   .credential = ctx.who.access_key_id,
                                   .request_id = ctx.request_id,
                                   .client_addr = ctx.remote};
}

asio::awaitable<void> audit_denial(const request_context& ctx, std::string_view action,
                                   std::string_view resource, std::string_view message)
{
    const auto who = audit_context_of(ctx);
    const std::string details = "{\"reason\":" + registry::audit_quote(message) + "}";
    try {
        auto conn = co_await ctx.svc->db->acquire();
        co_await registry::append_audit(*conn, who, action, resource, "", details, registry::audit_denied);
    } catch (const std::exception& e) {
        log::warn("cannot record a denial in the audit log",
                  {{"request_id", ctx.request_id}, {"action", std::string(action)}, {"error", e.what()}});
    }
}

asio::awaitable<void> audit_download(const request_context& ctx)
{
    if (ctx.bucket != ctx.svc->opts.models_bucket && ctx.bucket_has_models == false)
        co_return; // no model lives in the bucket: not a model download
    const auto who = audit_context_of(ctx);
    const std::string resource = ctx.bucket + "/" + ctx.key;
    auto conn = co_await ctx.svc->db->acquire();
    if (ctx.bucket == ctx.svc->opts.models_bucket) {
        // team/model/ref/path
        auto first = ctx.key.find('/');
        auto second = first == std::string::npos ? first : ctx.key.find('/', first + 1);
        auto third = second == std::string::npos ? second : ctx.key.find('/', second + 1);
        const std::string team = ctx.key.substr(0, first);
        std::string details = "{\"via\":\"view\"";
        if (third != std::string::npos)
            details += ",\"model\":" + registry::audit_quote(ctx.key.substr(0, second)) +
                       ",\"ref\":" + registry::audit_quote(ctx.key.substr(second + 1, third - second - 1));
        details += "}";
        co_await registry::append_audit(*conn, who, "model.download", resource, team, details,
                                        registry::audit_allowed);
        co_return;
    }
    // A read through the snapshot view (.snapshots/<name>/<key>) reads <key> as it was: a model file when
    // <key> is under a model's prefix.
    std::string_view live = ctx.key;
    if (registry::is_snapshot_key(live)) {
        live.remove_prefix(std::min(live.size(), registry::snapshot_key_prefix.size()));
        const auto slash = live.find('/');
        live = slash == std::string_view::npos ? std::string_view() : live.substr(slash + 1);
    }
    const std::string model_key(live);
    // One statement: a row only when the key is under some model's prefix in this bucket.
    co_await registry::sql(
        *conn,
        "SELECT audit_append($1, $2, x.team, 'model.download', $3, 'allowed', $4, $5, "
        "jsonb_build_object('via', 'bucket', 'model', x.team || '/' || x.model)) FROM (SELECT t.name AS "
        "team, "
        "m.name AS model FROM models m JOIN teams t ON t.id = m.team_id JOIN buckets b ON b.id = m.bucket_id "
        "WHERE b.name = $6 AND starts_with($7, m.prefix) ORDER BY length(m.prefix) DESC LIMIT 1) x",
        who.actor, who.credential, resource, who.request_id, who.client_addr, ctx.bucket, model_key);
}

} // namespace depot::server
