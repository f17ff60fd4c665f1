// REST handlers for content (upload avoidance), buckets (settings, usage) and the caller.
#include "common/hash.hpp"
#include "registry/service/digest_copy.hpp"
#include "s3/header_values.hpp"
#include "s3/names.hpp"
#include "server/api/http_api.hpp"
#include "server/authorization.hpp"
#include "server/services.hpp"

#include <array>

namespace depot::server::api {
namespace {

constexpr std::size_t max_lookup_digests = 1000;

json::object usage_json(const registry::usage& u)
{
    return json::object{{"buckets", u.buckets},
                        {"objects", u.objects},
                        {"versions", u.versions},
                        {"logical_bytes", u.logical_bytes},
                        {"physical_bytes", u.physical_bytes}};
}

json::object bucket_json(const registry::bucket& b)
{
    return json::object{{"name", b.name},
                        {"owner", b.owner_id},
                        {"region", b.region},
                        {"created_at", iso8601(b.created_at)},
                        {"versioning", b.versioning},
                        {"dedup", b.dedup},
                        {"object_events", b.object_events}};
}

} // namespace

asio::awaitable<result<response>> whoami(request_context& ctx, const path_params&)
{
    json::object body{{"user_id", ctx.who.user_id},
                      {"display_name", ctx.who.display_name},
                      {"credential", ctx.who.access_key_id}};
    co_return json_response(body);
}

asio::awaitable<result<response>> lookup_content(request_context& ctx, const path_params&)
{
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    if (auto only = only_fields(*body, {"sha256"}); !only)
        co_return std::move(only).error();
    auto it = body->find("sha256");
    if (it == body->end() || !it->value().is_array())
        co_return make_error(errc::invalid_argument,
                             "The field 'sha256' must be an array of SHA-256 digests");
    const auto& list = it->value().as_array();
    if (list.size() > max_lookup_digests)
        co_return make_error(errc::invalid_argument,
                             "At most " + std::to_string(max_lookup_digests) + " digests per call");
    std::vector<std::string> digests;
    for (const auto& v : list) {
        if (!v.is_string())
            co_return make_error(errc::invalid_argument, "The field 'sha256' must hold strings");
        auto raw = sha256_of(v.as_string(), "sha256");
        if (!raw)
            co_return std::move(raw).error();
        digests.push_back(std::move(*raw));
    }
    auto found = co_await ctx.svc->catalog.lookup(ctx.who.user_id, digests);
    json::array present;
    std::vector<std::string> seen;
    for (const auto& m : found) {
        present.push_back(json::object{{"sha256", to_hex(m.sha256)}, {"size", m.size}});
        seen.push_back(m.sha256);
    }
    json::array missing;
    for (const auto& d : digests)
        if (std::find(seen.begin(), seen.end(), d) == seen.end())
            missing.push_back(json::string(to_hex(d)));
    json::object out{{"found", std::move(present)}, {"missing", std::move(missing)}};
    co_return json_response(out);
}

asio::awaitable<result<response>> create_object_from_digest(request_context& ctx, const path_params&)
{
    // A precondition is honoured or refused, never ignored: this route has none.
    if (ctx.get("if-match") || ctx.get("if-none-match"))
        co_return make_error(errc::not_implemented,
                             "If-Match and If-None-Match are not supported when creating an object from a "
                             "digest; nothing was written");
    auto target = authorized_bucket(ctx);
    if (!target)
        co_return std::move(target).error();
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    if (auto only = only_fields(*body, {"key", "sha256", "size", "content_type", "metadata"}); !only)
        co_return std::move(only).error();
    auto key = string_field(*body, "key");
    if (!key)
        co_return std::move(key).error();
    if (auto valid = s3::validate_object_key(*key); !valid)
        co_return std::move(valid).error();
    if (registry::is_snapshot_key(*key))
        co_return make_error(errc::invalid_argument, "Keys under .snapshots/ are read-only snapshot views",
                             "key");
    if (auto inside = co_await authorize_area(ctx, ctx.permission, target->name, *key); !inside)
        co_return std::move(inside).error();
    // A write of the key, as PutObject is: the target bucket's policy decides with the request's conditions.
    if (auto allowed = authorize_bucket_rest(ctx, ctx.permission, *target, "s3:PutObject", *key); !allowed)
        co_return std::move(allowed).error();
    auto hex = string_field(*body, "sha256");
    if (!hex)
        co_return std::move(hex).error();
    auto digest = sha256_of(*hex, "sha256");
    if (!digest)
        co_return std::move(digest).error();
    auto size = integer_field(*body, "size", 0, INT64_MAX);
    if (!size)
        co_return std::move(size).error();

    std::optional<registry::object_headers> headers;
    auto content_type = body->find("content_type");
    auto metadata = body->find("metadata");
    if (content_type != body->end() || metadata != body->end()) {
        headers.emplace();
        if (content_type != body->end()) {
            auto ct = string_field(*body, "content_type");
            if (!ct)
                co_return std::move(ct).error();
            if (auto valid = s3::validate_field_value("content_type", *ct); !valid)
                co_return std::move(valid).error();
            headers->content_type = std::move(*ct);
        }
        if (metadata != body->end()) {
            if (!metadata->value().is_object())
                co_return make_error(errc::invalid_argument,
                                     "The field 'metadata' must be an object of strings");
            for (const auto& m : metadata->value().as_object()) {
                if (!m.value().is_string())
                    co_return make_error(errc::invalid_argument,
                                         "The field 'metadata' must be an object of strings");
                std::string name(m.key());
                for (auto& c : name)
                    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                headers->user_metadata.emplace_back(std::move(name), std::string(m.value().as_string()));
            }
            if (auto valid = s3::validate_user_metadata(headers->user_metadata); !valid)
                co_return std::move(valid).error();
        }
    }

    // Only content the caller can already read may be referenced (a scoped credential: inside its scope).
    const auto area = co_await scope_area_of(ctx);
    // A named request, not a temporary in the co_await expression: GCC 12 destroys such a temporary twice.
    const registry::digest_copy_request request{
        .owner_id = ctx.who.user_id,
        .sha256 = *digest,
        .size = static_cast<std::uint64_t>(*size),
        .within = area ? &*area : nullptr,
        .target = &*target,
        .key = *key,
        .headers = std::move(headers),
        // Reading the source, as GetObject: its bucket's policy may
        // deny it (then the content is not the caller's to use).
        .may_read = [&ctx](const registry::bucket& b, std::string_view k) {
            return authorize_bucket_rest(ctx, auth::permission::read_object, b, "s3:GetObject", k);
        }};
    auto created = co_await registry::copy_from_digest(ctx.audit, ctx.svc->catalog, ctx.svc->buckets,
                                                       ctx.svc->objects, request);
    if (!created)
        co_return std::move(created).error();
    json::object out{{"bucket", target->name},
                     {"key", created->key},
                     {"version_id", created->version_id},
                     {"etag", "\"" + created->etag + "\""},
                     {"size", created->size},
                     {"sha256", to_hex(*digest)},
                     {"last_modified", iso8601(created->last_modified)}};
    co_return json_response(out, http::status::created);
}

asio::awaitable<result<response>> get_bucket(request_context& ctx, const path_params&)
{
    // A bucket's settings are read like HeadBucket, which S3 authorizes as s3:ListBucket: the route declares
    // that action, and the authorization step decided it.
    auto b = authorized_bucket(ctx);
    if (!b)
        co_return std::move(b).error();
    co_return json_response(bucket_json(*b));
}

asio::awaitable<result<response>> update_bucket(request_context& ctx, const path_params&)
{
    auto b = authorized_bucket(ctx);
    if (!b)
        co_return std::move(b).error();
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    if (auto only = only_fields(*body, {"dedup", "object_events"}); !only)
        co_return std::move(only).error();
    // Every field is checked before anything changes.
    constexpr std::array<std::string_view, 2> flags = {"dedup", "object_events"};
    for (std::string_view name : flags)
        if (auto it = body->find(name); it != body->end() && !it->value().is_bool())
            co_return make_error(errc::invalid_argument,
                                 "The field '" + std::string(name) + "' must be true or false",
                                 std::string(name));
    // Each setting as the bucket policy names it, all decided before anything changes: object_events is the
    // bucket's event notification configuration (s3:PutBucketNotification); dedup, how new writes are kept,
    // has no AWS action of its own and counts as s3:PutBucketVersioning, the other such setting.
    for (auto [name, action] :
         {std::pair<std::string_view, std::string_view>{"dedup", "s3:PutBucketVersioning"},
          {"object_events", "s3:PutBucketNotification"}})
        if (body->find(name) != body->end())
            if (auto allowed = authorize_bucket_rest(ctx, ctx.permission, *b, action); !allowed)
                co_return std::move(allowed).error();
    auto it = body->find("dedup");
    if (it != body->end()) {
        auto updated = co_await ctx.svc->buckets.set_dedup(ctx.audit, b->name, it->value().as_bool());
        if (!updated)
            co_return std::move(updated).error();
        b = std::move(updated);
    }
    auto events = body->find("object_events");
    if (events != body->end()) {
        auto updated =
            co_await ctx.svc->buckets.set_object_events(ctx.audit, b->name, events->value().as_bool());
        if (!updated)
            co_return std::move(updated).error();
        b = std::move(updated);
    }
    co_return json_response(bucket_json(*b));
}

asio::awaitable<result<response>> bucket_usage(request_context& ctx, const path_params&)
{
    // Usage sums the bucket's listing: the route declares s3:ListBucket.
    auto b = authorized_bucket(ctx);
    if (!b)
        co_return std::move(b).error();
    auto u = co_await ctx.svc->catalog.bucket_usage(b->id);
    auto out = usage_json(u);
    out["bucket"] = b->name;
    co_return json_response(out);
}

asio::awaitable<result<response>> owner_usage(request_context& ctx, const path_params&)
{
    auto u = co_await ctx.svc->catalog.owner_usage(ctx.who.user_id);
    auto out = usage_json(u);
    out["owner"] = ctx.who.user_id;
    co_return json_response(out);
}

} // namespace depot::server::api
