// REST handlers for webhook subscriptions: /api/v1/teams/{team}/webhooks[/{webhook}[/rotate|/ping|
// /deliveries[/{delivery}[/redeliver]]]]. Only a team admin (or an installation admin) manages a team's
// webhooks; a caller outside the team gets 404 as for a missing team, a member below admin 403.
#include "registry/service/webhooks.hpp"

#include "registry/service/model_registry.hpp"
#include "registry/vocabulary.hpp"
#include "server/api/http_api.hpp"
#include "server/api/paging.hpp"
#include "server/authorization.hpp"
#include "server/services.hpp"
#include "server/webhooks/target.hpp"

#include <set>

namespace depot::server::api {
namespace {

constexpr std::int64_t default_overlap_seconds = 24 * 3600;
constexpr std::int64_t max_overlap_seconds = 7 * 24 * 3600;

/// The team in the path if the caller may manage its webhooks (team admins and installation admins).
asio::awaitable<result<registry::team>> admin_team(request_context& ctx, const path_params& params)
{
    auto t = co_await authorize_team(ctx, ctx.permission, path_param(params, "team"));
    if (!t)
        co_return std::move(t).error();
    co_return std::move(t->team);
}

/// A numeric id path segment; not_found otherwise (no such resource can exist).
result<std::int64_t> id_param(const path_params& params, std::string_view name, std::string_view what)
{
    const auto s = path_param(params, name);
    std::int64_t n = 0;
    bool valid = !s.empty() && s.size() <= 18;
    for (char c : s) {
        valid = valid && c >= '0' && c <= '9';
        n = valid ? n * 10 + (c - '0') : 0;
    }
    if (!valid || n == 0)
        return make_error(errc::not_found, "No such " + std::string(what) + " '" + std::string(s) + "'");
    return n;
}

json::object webhook_json(const registry::webhook_subscription& w, std::string_view team)
{
    json::array types;
    for (const auto& t : w.event_types)
        types.push_back(json::string(t));
    json::object o{{"id", w.id},
                   {"team", team},
                   {"url", w.url},
                   {"description", w.description},
                   {"event_types", std::move(types)},
                   {"enabled", w.enabled},
                   {"consecutive_failures", w.consecutive_failures},
                   {"created_by", w.created_by},
                   {"created_at", iso8601(w.created_at)},
                   {"updated_at", iso8601(w.updated_at)}};
    o["model"] = w.model ? json::value(json::string(*w.model)) : json::value(nullptr);
    o["bucket"] = w.bucket ? json::value(json::string(*w.bucket)) : json::value(nullptr);
    o["disabled_reason"] =
        w.disabled_reason ? json::value(json::string(*w.disabled_reason)) : json::value(nullptr);
    o["previous_secret_expires_at"] = w.previous_secret_expires_at
                                          ? json::value(json::string(iso8601(*w.previous_secret_expires_at)))
                                          : json::value(nullptr);
    return o;
}

json::object delivery_json(const registry::webhook_delivery& d)
{
    json::object o{{"id", d.id},
                   {"event_id", "evt_" + std::to_string(d.event_id)},
                   {"event_type", d.event_type},
                   {"state", d.state},
                   {"attempts", d.attempts},
                   {"created_at", iso8601(d.created_at)}};
    o["next_attempt_at"] =
        d.state == "pending" ? json::value(json::string(iso8601(d.next_attempt_at))) : json::value(nullptr);
    o["last_status"] = d.last_status ? json::value(*d.last_status) : json::value(nullptr);
    o["last_error"] = d.last_error ? json::value(json::string(*d.last_error)) : json::value(nullptr);
    o["delivered_at"] =
        d.delivered_at ? json::value(json::string(iso8601(*d.delivered_at))) : json::value(nullptr);
    return o;
}

json::object attempt_json(const registry::webhook_attempt& a)
{
    json::object o{{"number", a.number},
                   {"instance", a.instance},
                   {"started_at", iso8601(a.started_at)},
                   {"latency_ms", a.latency_ms},
                   {"response_excerpt", a.response_excerpt}};
    o["status"] = a.status ? json::value(*a.status) : json::value(nullptr);
    o["error"] = a.error ? json::value(json::string(*a.error)) : json::value(nullptr);
    return o;
}

/// Checks a target URL's form and, for the installation's policy, where it resolves.
asio::awaitable<result<void>> check_url(request_context& ctx, const std::string& url)
{
    auto target = webhooks::parse_target(url);
    if (!target)
        co_return std::move(target).error();
    auto resolved = co_await webhooks::resolve_target(*target, ctx.svc->opts.webhook_allow_private,
                                                      ctx.svc->opts.webhook_allow_cidr);
    if (!resolved)
        co_return std::move(resolved).error();
    co_return ok();
}

/// "event_types": an array of distinct known event types.
result<std::vector<std::string>> event_types_field(const json::object& o)
{
    const auto& v = o.at("event_types");
    if (!v.is_array())
        return make_error(errc::invalid_argument, "The field 'event_types' must be an array of event types",
                          "event_types");
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (const auto& t : v.as_array()) {
        if (!t.is_string() || !registry::events::is_event_type(t.as_string()))
            return make_error(errc::invalid_argument,
                              "The field 'event_types' lists an unknown event type" +
                                  (t.is_string() ? " '" + std::string(t.as_string()) + "'" : std::string()) +
                                  "; known: model.created, version.*, alias.updated, snapshot.created, "
                                  "object.created, object.deleted, warmup.*, webhook.*",
                              "event_types");
        if (!seen.insert(std::string(t.as_string())).second)
            return make_error(errc::invalid_argument,
                              "The field 'event_types' lists '" + std::string(t.as_string()) + "' twice",
                              "event_types");
        out.emplace_back(t.as_string());
    }
    return out;
}

result<std::optional<std::string>> optional_string_field(const json::object& o, std::string_view name)
{
    if (!o.contains(name) || o.at(name).is_null())
        return std::optional<std::string>();
    auto s = string_field(o, name);
    if (!s)
        return std::move(s).error();
    return std::optional<std::string>(std::move(*s));
}

/// A bucket filter is the bucket's notification configuration, as S3 has it: the bucket owner's, under the
/// bucket policy's s3:PutBucketNotification.
constexpr std::string_view notification_action = "s3:PutBucketNotification";

/// The bucket a webhook's body names as its filter: the caller's (invalid_argument otherwise, naming
/// nothing about other users' buckets), and not denied notification_action (access_denied).
asio::awaitable<result<registry::bucket>> filter_bucket(request_context& ctx, const std::string& name)
{
    auto b = co_await caller_bucket(ctx, name, notification_action, "");
    if (!b && b.error().code != errc::access_denied)
        co_return make_error(errc::invalid_argument,
                             "The field 'bucket' names no bucket of yours: '" + name + "'", "bucket");
    co_return b;
}

struct webhook_access
{
    registry::team team;
    registry::webhook_subscription webhook;
};

asio::awaitable<result<webhook_access>> webhook_for(request_context& ctx, const path_params& params)
{
    auto t = co_await admin_team(ctx, params);
    if (!t)
        co_return std::move(t).error();
    auto id = id_param(params, "webhook", "webhook");
    if (!id)
        co_return std::move(id).error();
    auto w = co_await ctx.svc->webhooks->get(t->id, *id);
    if (!w)
        co_return std::move(w).error();
    co_return webhook_access{std::move(*t), std::move(*w)};
}

} // namespace

asio::awaitable<result<response>> list_webhooks(request_context& ctx, const path_params& params)
{
    auto t = co_await admin_team(ctx, params);
    if (!t)
        co_return std::move(t).error();
    auto p = page_of(ctx);
    if (!p)
        co_return std::move(p).error();
    std::int64_t after = 0;
    if (!p->cursor.empty()) {
        path_params cursor{{"cursor", p->cursor}};
        auto n = id_param(cursor, "cursor", "cursor");
        if (!n)
            co_return make_error(errc::invalid_argument, "cursor is not one this API returned", "cursor");
        after = *n;
    }
    auto rows = co_await ctx.svc->webhooks->list(t->id, after, p->limit + 1);
    std::optional<std::string> next;
    if (rows.size() > p->limit) {
        rows.resize(p->limit);
        next = std::to_string(rows.back().id);
    }
    json::array items;
    for (const auto& w : rows)
        items.push_back(webhook_json(w, t->name));
    co_return list_response(std::move(items), next);
}

asio::awaitable<result<response>> create_webhook(request_context& ctx, const path_params& params)
{
    auto t = co_await admin_team(ctx, params);
    if (!t)
        co_return std::move(t).error();
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    if (auto only = only_fields(*body, {"url", "description", "event_types", "model", "bucket"}); !only)
        co_return std::move(only).error();
    registry::webhook_spec spec;
    auto url = string_field(*body, "url");
    if (!url)
        co_return std::move(url).error();
    spec.url = std::move(*url);
    auto description = string_field(*body, "description", false);
    if (!description)
        co_return std::move(description).error();
    if (description->size() > 1024)
        co_return make_error(errc::invalid_argument, "The field 'description' is longer than 1024 bytes",
                             "description");
    spec.description = std::move(*description);
    if (body->contains("event_types")) {
        auto types = event_types_field(*body);
        if (!types)
            co_return std::move(types).error();
        spec.event_types = std::move(*types);
    }
    auto model = optional_string_field(*body, "model");
    if (!model)
        co_return std::move(model).error();
    if (*model) {
        auto m = co_await ctx.svc->models.get_model(t->id, **model);
        if (!m)
            co_return make_error(
                errc::invalid_argument,
                "The field 'model' names no model of team " + t->name + ": '" + **model + "'", "model");
        spec.model_id = m->id;
    }
    auto bucket = optional_string_field(*body, "bucket");
    if (!bucket)
        co_return std::move(bucket).error();
    if (*bucket) {
        auto b = co_await filter_bucket(ctx, **bucket);
        if (!b)
            co_return std::move(b).error();
        spec.bucket_id = b->id;
    }
    for (const auto& type : spec.event_types)
        if ((type == "object.created" || type == "object.deleted" || type == "snapshot.created") &&
            !spec.bucket_id)
            co_return make_error(errc::invalid_argument,
                                 "The event type '" + type +
                                     "' is about a bucket: set 'bucket' to the bucket to receive it for",
                                 "event_types");
    if (auto checked = co_await check_url(ctx, spec.url); !checked)
        co_return std::move(checked).error();
    auto [w, secret] = co_await ctx.svc->webhooks->create(ctx.audit, t->id, std::move(spec), ctx.who.user_id);
    auto out = webhook_json(w, t->name);
    out["secret"] = secret;
    auto res = json_response(out, http::status::created);
    res.headers.set(http::field::location, "/api/v1/teams/" + t->name + "/webhooks/" + std::to_string(w.id));
    co_return res;
}

asio::awaitable<result<response>> get_webhook(request_context& ctx, const path_params& params)
{
    auto a = co_await webhook_for(ctx, params);
    if (!a)
        co_return std::move(a).error();
    co_return json_response(webhook_json(a->webhook, a->team.name));
}

asio::awaitable<result<response>> update_webhook(request_context& ctx, const path_params& params)
{
    auto a = co_await webhook_for(ctx, params);
    if (!a)
        co_return std::move(a).error();
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    if (auto only = only_fields(*body, {"url", "description", "event_types", "enabled", "bucket"}); !only)
        co_return std::move(only).error();
    registry::webhook_update u;
    // A bucket filter makes the subscription carry that bucket's object events (keys, sizes, presigned
    // links): only someone who may see the bucket may point those events somewhere else, widen them or turn
    // them back on (a subscription its creator's departure stopped would otherwise carry the bucket's
    // events to the team again), and a new filter must name a bucket of the caller's, as at creation.
    // Disabling or describing the subscription is left to any admin of the team.
    const auto enabled = body->find("enabled");
    const bool enables = enabled != body->end() && enabled->value().is_bool() && enabled->value().as_bool();
    const bool redirects =
        body->contains("url") || body->contains("event_types") || body->contains("bucket") || enables;
    if (redirects && a->webhook.bucket)
        if (auto mine = co_await caller_bucket(ctx, *a->webhook.bucket, notification_action, ""); !mine)
            co_return make_error(errc::access_denied,
                                 "This webhook's bucket filter names bucket " + *a->webhook.bucket +
                                     ", which is not yours: only its owner may change where its events go "
                                     "or enable them");
    bool has_bucket = a->webhook.bucket.has_value();
    if (body->contains("bucket")) {
        auto bucket = string_field(*body, "bucket");
        if (!bucket)
            co_return std::move(bucket).error();
        auto b = co_await filter_bucket(ctx, *bucket);
        if (!b)
            co_return std::move(b).error();
        u.bucket_id = b->id;
        has_bucket = true;
    }
    if (body->contains("url")) {
        auto url = string_field(*body, "url");
        if (!url)
            co_return std::move(url).error();
        u.url = std::move(*url);
    }
    if (body->contains("description")) {
        auto d = string_field(*body, "description");
        if (!d)
            co_return std::move(d).error();
        if (d->size() > 1024)
            co_return make_error(errc::invalid_argument, "The field 'description' is longer than 1024 bytes",
                                 "description");
        u.description = std::move(*d);
    }
    if (body->contains("event_types")) {
        auto types = event_types_field(*body);
        if (!types)
            co_return std::move(types).error();
        for (const auto& type : *types)
            if ((type == "object.created" || type == "object.deleted" || type == "snapshot.created") &&
                !has_bucket)
                co_return make_error(errc::invalid_argument,
                                     "The event type '" + type +
                                         "' is about a bucket and this webhook has no bucket filter",
                                     "event_types");
        u.event_types = std::move(*types);
    }
    if (body->contains("enabled")) {
        if (!body->at("enabled").is_bool())
            co_return make_error(errc::invalid_argument, "The field 'enabled' must be true or false",
                                 "enabled");
        u.enabled = body->at("enabled").as_bool();
    }
    if (u.url)
        if (auto checked = co_await check_url(ctx, *u.url); !checked)
            co_return std::move(checked).error();
    auto w = co_await ctx.svc->webhooks->update(ctx.audit, a->team.id, a->webhook.id, std::move(u));
    if (!w)
        co_return std::move(w).error();
    co_return json_response(webhook_json(*w, a->team.name));
}

asio::awaitable<result<response>> delete_webhook(request_context& ctx, const path_params& params)
{
    auto a = co_await webhook_for(ctx, params);
    if (!a)
        co_return std::move(a).error();
    auto removed = co_await ctx.svc->webhooks->remove(ctx.audit, a->team.id, a->webhook.id);
    if (!removed)
        co_return std::move(removed).error();
    response res;
    res.status = http::status::no_content;
    co_return res;
}

asio::awaitable<result<response>> rotate_webhook_secret(request_context& ctx, const path_params& params)
{
    auto a = co_await webhook_for(ctx, params);
    if (!a)
        co_return std::move(a).error();
    // The new secret signs that bucket's object events: whoever holds it can forge them to the receiver,
    // so for a bucket filter it is the bucket owner's to take, as changing where the events go is.
    if (a->webhook.bucket)
        if (auto mine = co_await caller_bucket(ctx, *a->webhook.bucket, notification_action, ""); !mine)
            co_return make_error(errc::access_denied,
                                 "This webhook's bucket filter names bucket " + *a->webhook.bucket +
                                     ", which is not yours: only its owner may rotate the secret that signs "
                                     "its events");
    std::int64_t overlap = default_overlap_seconds;
    if (ctx.content_length.value_or(0) > 0) {
        auto body = co_await read_json_object(ctx);
        if (!body)
            co_return std::move(body).error();
        if (auto only = only_fields(*body, {"overlap_seconds"}); !only)
            co_return std::move(only).error();
        if (body->contains("overlap_seconds")) {
            auto n = integer_field(*body, "overlap_seconds", 0, max_overlap_seconds);
            if (!n)
                co_return std::move(n).error();
            overlap = *n;
        }
    }
    auto rotated = co_await ctx.svc->webhooks->rotate(ctx.audit, a->team.id, a->webhook.id,
                                                      std::chrono::seconds(overlap));
    if (!rotated)
        co_return std::move(rotated).error();
    auto out = webhook_json(rotated->first, a->team.name);
    out["secret"] = rotated->second;
    co_return json_response(out);
}

asio::awaitable<result<response>> ping_webhook(request_context& ctx, const path_params& params)
{
    auto a = co_await webhook_for(ctx, params);
    if (!a)
        co_return std::move(a).error();
    auto event = co_await ctx.svc->webhooks->ping(ctx.audit, a->team.id, a->webhook.id, ctx.who.user_id);
    if (!event)
        co_return std::move(event).error();
    json::object out{{"event_id", "evt_" + std::to_string(*event)}, {"event_type", "webhook.ping"}};
    co_return json_response(out, http::status::accepted);
}

asio::awaitable<result<response>> list_webhook_deliveries(request_context& ctx, const path_params& params)
{
    auto a = co_await webhook_for(ctx, params);
    if (!a)
        co_return std::move(a).error();
    auto p = page_of(ctx);
    if (!p)
        co_return std::move(p).error();
    std::int64_t before = 0;
    if (!p->cursor.empty()) {
        path_params cursor{{"cursor", p->cursor}};
        auto n = id_param(cursor, "cursor", "cursor");
        if (!n)
            co_return make_error(errc::invalid_argument, "cursor is not one this API returned", "cursor");
        before = *n;
    }
    std::optional<std::string> state;
    if (auto s = ctx.param("state")) {
        if (*s != "pending" && *s != "delivering" && *s != "delivered" && *s != "failed")
            co_return make_error(errc::invalid_argument,
                                 "state must be pending, delivering, delivered or failed", "state");
        state = std::string(*s);
    }
    auto rows = co_await ctx.svc->webhooks->deliveries(a->webhook.id, before, p->limit + 1, state);
    std::optional<std::string> next;
    if (rows.size() > p->limit) {
        rows.resize(p->limit);
        next = std::to_string(rows.back().id);
    }
    json::array items;
    for (const auto& d : rows)
        items.push_back(delivery_json(d));
    co_return list_response(std::move(items), next);
}

asio::awaitable<result<response>> get_webhook_delivery(request_context& ctx, const path_params& params)
{
    auto a = co_await webhook_for(ctx, params);
    if (!a)
        co_return std::move(a).error();
    auto id = id_param(params, "delivery", "delivery");
    if (!id)
        co_return std::move(id).error();
    auto d = co_await ctx.svc->webhooks->delivery(a->webhook.id, *id);
    if (!d)
        co_return std::move(d).error();
    auto out = delivery_json(*d);
    json::array attempts;
    for (const auto& at : d->attempt_log)
        attempts.push_back(attempt_json(at));
    out["attempt_log"] = std::move(attempts);
    co_return json_response(out);
}

asio::awaitable<result<response>> redeliver_webhook(request_context& ctx, const path_params& params)
{
    auto a = co_await webhook_for(ctx, params);
    if (!a)
        co_return std::move(a).error();
    auto id = id_param(params, "delivery", "delivery");
    if (!id)
        co_return std::move(id).error();
    auto d = co_await ctx.svc->webhooks->redeliver(ctx.audit, a->webhook.id, *id);
    if (!d)
        co_return std::move(d).error();
    co_return json_response(delivery_json(*d), http::status::accepted);
}

} // namespace depot::server::api
