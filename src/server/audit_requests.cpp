#include "server/audit_requests.hpp"

#include "common/json.hpp"
#include "common/log.hpp"
#include "registry/service/audit.hpp"
#include "registry/service/snapshot_service.hpp"
#include "s3/utf8.hpp"
#include "server/services.hpp"

#include <mutex>
#include <unordered_map>

namespace depot::server {

namespace {

/// The refusals of the requests in flight, by request (its context's address: unique while it runs).
struct refusals
{
    std::mutex mutex;
    std::unordered_map<const request_context*, refusal> by_request;
};

refusals& recorded()
{
    static refusals r;
    return r;
}

/// `text` as a text column holds it: ill-formed UTF-8 and NUL become U+FFFD. A refusal's row names what the
/// request sent, which was refused maybe because it is not text.
std::string storable(std::string_view text)
{
    if (s3::is_storable_text(text))
        return std::string(text);
    std::string out;
    for (const char c : utf8_lossy(text)) {
        if (c == '\0')
            s3::append_utf8(out, 0xFFFD);
        else
            out.push_back(c);
    }
    return out;
}

} // namespace

void note_refusal(const request_context& ctx, refusal what)
{
    auto& r = recorded();
    std::lock_guard lock(r.mutex);
    r.by_request.insert_or_assign(&ctx, std::move(what));
}

std::optional<refusal> take_refusal(const request_context& ctx)
{
    auto& r = recorded();
    std::lock_guard lock(r.mutex);
    auto it = r.by_request.find(&ctx);
    if (it == r.by_request.end())
        return std::nullopt;
    auto out = std::move(it->second);
    r.by_request.erase(it);
    return out;
}

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
    // A named value, not a braced temporary in a coroutine's arguments (GCC 12 destroys it twice).
    registry::denial d{
        .action = std::string(action), .resource = std::string(resource), .reason = std::string(message)};
    co_await audit_denial(ctx, std::move(d));
}

asio::awaitable<void> audit_denial(const request_context& ctx, registry::denial d)
{
    for (auto* text : {&d.resource, &d.team, &d.bucket, &d.key, &d.copy_source, &d.reason})
        *text = storable(*text);
    try {
        co_await registry::audit_log::record_denial(*ctx.svc->db, audit_context_of(ctx), d);
    } catch (const std::exception& e) {
        log::warn("cannot record a denial in the audit log",
                  {{"request_id", ctx.request_id}, {"action", d.action}, {"error", e.what()}});
    }
}

asio::awaitable<bool> audit_refusal(const request_context& ctx, const std::optional<error>& failure,
                                    refused_request addressed)
{
    const auto refused = take_refusal(ctx);
    if (!failure || ctx.who.user_id.empty() || (failure->code != errc::access_denied && !refused))
        co_return false;
    if (refused && !refused->team.empty())
        addressed.team = refused->team;
    if (refused && !refused->bucket.empty()) {
        addressed.bucket = refused->bucket;
        addressed.key = refused->key;
        addressed.copy_source = refused->copy_source;
    }
    registry::denial d{.action = std::move(addressed.action),
                       .resource = std::move(addressed.resource),
                       .team = std::move(addressed.team),
                       .bucket = std::move(addressed.bucket),
                       .key = std::move(addressed.key),
                       .copy_source = std::move(addressed.copy_source),
                       .reason = failure->message};
    co_await audit_denial(ctx, std::move(d));
    co_return true;
}

asio::awaitable<void> audit_download(const request_context& ctx, std::optional<bool> bucket_has_models)
{
    if (ctx.bucket != ctx.svc->opts.models_bucket && bucket_has_models == false)
        co_return; // no model lives in the bucket: not a model download
    const auto& who = ctx.audit;
    const std::string resource = ctx.bucket + "/" + ctx.key;
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
        co_await registry::audit_log::record_model_download(*ctx.svc->db, who, resource, team,
                                                            std::move(details));
        co_return;
    }
    // A read through the snapshot view (.snapshots/<name>/<key>) reads <key> as it was: a model file when
    // <key> is under a model's prefix.
    const std::string_view live = registry::live_key_of(ctx.key);
    co_await registry::audit_log::record_bucket_download(*ctx.svc->db, who, resource, ctx.bucket, live);
}

} // namespace depot::server
