// REST handlers for snapshots: /api/v1/buckets/{bucket}/snapshots[/{name}[/restore]]. Only the bucket's
// owner (or an admin) sees a bucket's snapshots; anyone else gets 404 as for a missing bucket.
#include "registry/service/snapshot_service.hpp"
#include "server/api/http_api.hpp"
#include "server/api/paging.hpp"
#include "server/authorization.hpp"
#include "server/services.hpp"

namespace depot::server::api {
namespace {

json::object snapshot_json(const registry::snapshot& s, std::string_view bucket)
{
    return json::object{{"name", s.name},
                        {"bucket", bucket},
                        {"prefix", s.prefix},
                        {"sequence", s.seq},
                        {"created_by", s.created_by},
                        {"created_at", iso8601(s.created_at)},
                        {"s3_prefix", std::string(registry::snapshot_key_prefix) + s.name + "/"}};
}

/// An optional string member; nullopt when absent.
result<std::optional<std::string>> snapshot_string(const json::object& o, std::string_view name)
{
    if (o.find(name) == o.end())
        return std::optional<std::string>();
    auto v = string_field(o, name);
    if (!v)
        return std::move(v).error();
    return std::optional<std::string>(std::move(*v));
}

} // namespace

asio::awaitable<result<response>> create_snapshot(request_context& ctx, const path_params&)
{
    // A snapshot keeps the bucket's listing for later (what it serves is then read key by key, under the
    // policy of each key): the route declares s3:ListBucket.
    auto b = authorized_bucket(ctx);
    if (!b)
        co_return std::move(b).error();
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    if (auto only = only_fields(*body, {"name", "prefix"}); !only)
        co_return std::move(only).error();
    auto name = string_field(*body, "name");
    if (!name)
        co_return std::move(name).error();
    auto prefix = snapshot_string(*body, "prefix");
    if (!prefix)
        co_return std::move(prefix).error();
    const std::string snapshot_prefix = prefix->value_or("");
    auto made = co_await ctx.svc->snapshots.create(ctx.audit, b->id, *name, snapshot_prefix, ctx.who.user_id);
    if (!made)
        co_return std::move(made).error();
    auto res = json_response(snapshot_json(*made, b->name), http::status::created);
    res.headers.set(http::field::location, "/api/v1/buckets/" + b->name + "/snapshots/" + made->name);
    co_return res;
}

asio::awaitable<result<response>> list_snapshots(request_context& ctx, const path_params&)
{
    auto b = authorized_bucket(ctx);
    if (!b)
        co_return std::move(b).error();
    auto p = page_of(ctx);
    if (!p)
        co_return std::move(p).error();
    auto rows = co_await ctx.svc->snapshots.list(b->id, p->cursor, p->limit + 1);
    std::optional<std::string> next;
    if (rows.size() > p->limit) {
        rows.resize(p->limit);
        next = rows.back().name;
    }
    json::array items;
    for (const auto& s : rows)
        items.push_back(snapshot_json(s, b->name));
    co_return list_response(std::move(items), next);
}

asio::awaitable<result<response>> get_snapshot(request_context& ctx, const path_params& params)
{
    auto b = authorized_bucket(ctx);
    if (!b)
        co_return std::move(b).error();
    auto s = co_await ctx.svc->snapshots.get(b->id, path_param(params, "snapshot"));
    if (!s)
        co_return make_error(errc::not_found, "The bucket has no snapshot named " +
                                                  std::string(path_param(params, "snapshot")));
    co_return json_response(snapshot_json(*s, b->name));
}

asio::awaitable<result<response>> delete_snapshot(request_context& ctx, const path_params& params)
{
    auto b = authorized_bucket(ctx);
    if (!b)
        co_return std::move(b).error();
    // Deleting a snapshot permanently deletes the versions only it kept, under its prefix:
    // s3:DeleteObjectVersion there.
    auto snap = co_await ctx.svc->snapshots.get(b->id, path_param(params, "snapshot"));
    if (!snap)
        co_return make_error(errc::not_found, "The bucket has no snapshot named " +
                                                  std::string(path_param(params, "snapshot")));
    if (auto allowed = authorize_bucket_rest(ctx, ctx.permission, *b, "s3:DeleteObjectVersion", snap->prefix);
        !allowed)
        co_return std::move(allowed).error();
    // And each key whose versions it deletes for good: s3:DeleteObjectVersion of that key.
    const auto may_purge = [&ctx, &bucket = *b](std::string_view key) {
        return authorize_bucket_rest(ctx, ctx.permission, bucket, "s3:DeleteObjectVersion", key);
    };
    auto removed =
        co_await ctx.svc->snapshots.remove(ctx.audit, b->id, path_param(params, "snapshot"), may_purge);
    if (!removed)
        co_return std::move(removed).error();
    response res;
    res.status = http::status::no_content;
    co_return res;
}

asio::awaitable<result<response>> restore_snapshot(request_context& ctx, const path_params& params)
{
    auto b = authorized_bucket(ctx);
    if (!b)
        co_return std::move(b).error();
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    if (auto only = only_fields(*body, {"target_bucket", "target_prefix", "prefix"}); !only)
        co_return std::move(only).error();
    auto target_name = snapshot_string(*body, "target_bucket");
    if (!target_name)
        co_return std::move(target_name).error();
    auto target_prefix = snapshot_string(*body, "target_prefix");
    if (!target_prefix)
        co_return std::move(target_prefix).error();
    auto prefix = snapshot_string(*body, "prefix");
    if (!prefix)
        co_return std::move(prefix).error();
    // A scoped credential restores only from inside its scope into its scope: the path names the source
    // bucket alone, the body the keys read and the bucket and keys written. Without a target_prefix the
    // keys keep their names, so they land under `prefix`. Checked before the target is looked up, so that
    // the answer tells nothing about buckets outside the scope.
    const std::string source_prefix = prefix->value_or("");
    if (auto inside =
            co_await authorize_area(ctx, auth::permission::read_object, b->name, source_prefix, true);
        !inside)
        co_return std::move(inside).error();
    if (auto inside =
            co_await authorize_area(ctx, auth::permission::write_object, target_name->value_or(b->name),
                                    target_prefix->value_or(source_prefix));
        !inside)
        co_return std::move(inside).error();
    auto target = *b;
    if (*target_name) {
        auto other = co_await caller_bucket(ctx, **target_name);
        if (!other)
            co_return std::move(other).error();
        target = std::move(*other);
    }
    // A restore reads the snapshot's keys (s3:GetObject in the source bucket) and writes the target keys
    // (s3:PutObject in the target bucket): both policies decide, about the prefixes first and then about
    // every key before anything is copied.
    // It lists the snapshot's keys under `prefix` (their names land in the target): s3:ListBucket with
    // that s3:prefix, as a listing of the snapshot view asks.
    if (auto allowed = authorize_bucket_rest(ctx, ctx.permission, *b, "s3:ListBucket", source_prefix);
        !allowed)
        co_return std::move(allowed).error();
    if (auto allowed = authorize_bucket_rest(ctx, ctx.permission, *b, "s3:GetObject", source_prefix);
        !allowed)
        co_return std::move(allowed).error();
    if (auto allowed = authorize_bucket_rest(ctx, ctx.permission, target, "s3:PutObject",
                                             target_prefix->value_or(source_prefix));
        !allowed)
        co_return std::move(allowed).error();
    registry::restore_request request;
    request.bucket_id = b->id;
    request.snapshot = std::string(path_param(params, "snapshot"));
    request.target = &target;
    request.prefix = std::move(*prefix);
    request.target_prefix = std::move(*target_prefix);
    request.owner_id = ctx.who.user_id;
    // A restored key carries its tags, as CopyObject's COPY directive does: reading them is
    // s3:GetObjectTagging of the source, writing them s3:PutObjectTagging of the target.
    request.check = [&ctx, &source = *b, &target](std::string_view from, std::string_view to,
                                                  bool copies_tags) -> result<void> {
        if (auto allowed = authorize_bucket_rest(ctx, ctx.permission, source, "s3:GetObject", from); !allowed)
            return allowed;
        if (copies_tags)
            if (auto allowed =
                    authorize_bucket_rest(ctx, ctx.permission, source, "s3:GetObjectTagging", from);
                !allowed)
                return allowed;
        if (auto allowed = authorize_bucket_rest(ctx, ctx.permission, target, "s3:PutObject", to); !allowed)
            return allowed;
        if (copies_tags)
            return authorize_bucket_rest(ctx, ctx.permission, target, "s3:PutObjectTagging", to);
        return {};
    };
    auto restored = co_await ctx.svc->snapshots.restore(ctx.audit, std::move(request));
    if (!restored)
        co_return std::move(restored).error();
    json::object out{{"snapshot", std::string(path_param(params, "snapshot"))},
                     {"target_bucket", target.name},
                     {"objects", restored->objects},
                     {"logical_bytes", restored->bytes}};
    co_return json_response(out);
}

} // namespace depot::server::api
