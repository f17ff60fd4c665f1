#include "server/scope_check.hpp"

#include "registry/credential_scope.hpp"
#include "server/s3/common.hpp"
#include "server/services.hpp"

#include <algorithm>
#include <array>

namespace depot::server {
namespace {

using registry::credential_scope;

error denied(std::string_view why)
{
    return make_error(errc::access_denied, "Access Denied: " + std::string(why));
}

bool is_read(http::verb v)
{
    return v == http::verb::get || v == http::verb::head;
}

constexpr std::array<std::string_view, 4> listing_operations = {"ListObjectsV2", "ListObjects",
                                                                "ListObjectVersions", "ListMultipartUploads"};
constexpr std::array<std::string_view, 3> bucket_reads = {"HeadBucket", "GetBucketLocation",
                                                          "GetBucketVersioning"};

template <std::size_t N>
bool one_of(const std::array<std::string_view, N>& names, std::string_view name)
{
    return std::find(names.begin(), names.end(), name) != names.end();
}

/// Whether an operation on `bucket` at `path` (an object key, or a listing's prefix when `listing`; empty
/// for other bucket-level operations) stays inside the scope. For an alias scope at a path of the model's
/// bucket, `frozen` (when given) receives the models-view key of the frozen file the read must serve.
asio::awaitable<result<void>> check_target(request_context& ctx, const credential_scope& s,
                                           std::string_view operation, std::string_view bucket,
                                           std::string_view path, bool object, bool listing,
                                           std::string* frozen = nullptr)
{
    std::optional<registry::model_location> where;
    if (!s.model.empty()) {
        const auto& view = ctx.svc->opts.models_bucket;
        if (bucket == view) {
            // The read-only view: team/model/<ref>/..., for an alias only team/model/<alias>/...
            std::string within = s.team + "/" + s.model + "/";
            if (!s.alias.empty())
                within += s.alias + "/";
            if (!object && !listing)
                co_return ok();
            if (std::string_view(path).starts_with(within))
                co_return ok();
            co_return denied("the credential is limited to " + within);
        }
        where = co_await registry::locate_model(*ctx.svc->db, s.team, s.model);
        if (!where)
            co_return denied("the credential's model no longer exists");
    }
    const auto area = registry::area_of(s, where ? &*where : nullptr);
    if (!area)
        co_return ok(); // confined to no bucket (read_only alone)
    if (bucket != area->bucket)
        co_return denied("the credential is limited to another bucket");
    if (!s.alias.empty()) {
        // Only the files of the version the alias points to now, and only as frozen: the live object at the
        // same path (overwritten since, or an older version of it) is not what the alias released.
        const auto refused = [&] {
            return denied("the credential is limited to the files of alias " + s.alias);
        };
        if (!object || !registry::alias_reads_frozen_file(operation, ctx.has_param("versionId")) ||
            !registry::area_reaches(*area, bucket, path))
            co_return refused();
        const auto relative = path.substr(area->prefix.size());
        if (!co_await registry::alias_has_file(*ctx.svc->db, where->model_id, s.alias, relative))
            co_return refused();
        if (frozen)
            *frozen = s.team + "/" + s.model + "/" + s.alias + "/" + std::string(relative);
        co_return ok();
    }
    if (area->prefix.empty())
        co_return ok();
    if ((object || listing) && registry::area_reaches(*area, bucket, path))
        co_return ok();
    if (!object && !listing && one_of(bucket_reads, operation))
        co_return ok();
    co_return denied("the credential is limited to keys under " + area->prefix);
}

} // namespace

asio::awaitable<result<void>> check_s3_scope(request_context& ctx, std::string_view operation)
{
    if (ctx.who.scope.empty())
        co_return ok();
    auto s = registry::parse_scope(ctx.who.scope);
    if (!s)
        co_return denied("the credential's scope is unreadable");
    if (s->unrestricted())
        co_return ok();
    if (s->read_only && !is_read(ctx.header->method()))
        co_return denied("the credential is read-only");
    if (ctx.bucket.empty()) // ListBuckets: it lists only what the scope reaches (scope_area_of)
        co_return ok();
    if (s->bucket.empty() && s->model.empty()) // read-only and nothing else
        co_return ok();
    const bool object = !ctx.key.empty();
    const bool listing = !object && one_of(listing_operations, operation);
    std::string_view path = ctx.key;
    if (listing)
        path = ctx.param("prefix").value_or("");
    if (!object && !listing && (operation == "CreateBucket" || operation == "DeleteBucket") &&
        s->bucket.empty())
        co_return denied("the credential cannot create or delete buckets");
    if (auto inside = co_await check_target(ctx, *s, operation, ctx.bucket, path, object, listing,
                                            &ctx.frozen_view_key);
        !inside)
        co_return inside;
    // A copy reads its source: it must be inside the scope too.
    if (auto source = ctx.get("x-amz-copy-source"); source && object) {
        auto parsed = s3op::parse_copy_source(*source);
        if (!parsed)
            co_return std::move(parsed).error();
        if (auto inside =
                co_await check_target(ctx, *s, "GetObject", parsed->bucket, parsed->key, true, false);
            !inside)
            co_return inside;
    }
    co_return ok();
}

asio::awaitable<std::optional<registry::scope_area>> scope_area_of(request_context& ctx)
{
    if (ctx.who.scope.empty())
        co_return std::nullopt;
    auto s = registry::parse_scope(ctx.who.scope);
    if (!s)
        co_return registry::scope_area{}; // unreadable: reaches nothing
    std::optional<registry::model_location> where;
    if (!s->model.empty())
        where = co_await registry::locate_model(*ctx.svc->db, s->team, s->model);
    co_return registry::area_of(*s, where ? &*where : nullptr);
}

asio::awaitable<result<void>> check_scope_reaches(request_context& ctx, std::string_view bucket,
                                                  std::string_view key_prefix)
{
    if (ctx.who.scope.empty())
        co_return ok();
    auto s = registry::parse_scope(ctx.who.scope);
    if (!s)
        co_return denied("the credential's scope is unreadable");
    if (!s->alias.empty())
        co_return denied("the credential reads only the files of alias " + s->alias);
    auto area = co_await scope_area_of(ctx);
    if (!area || registry::area_reaches(*area, bucket, key_prefix))
        co_return ok();
    co_return denied("the credential is limited to keys under " + area->bucket + "/" + area->prefix);
}

asio::awaitable<result<void>> check_api_scope(request_context& ctx, std::string_view operation,
                                              const api::path_params& params)
{
    // A session of a scoped credential can always read and end itself.
    if (ctx.who.scope.empty() || operation == "whoami" || operation == "getCurrentSession" ||
        operation == "deleteCurrentSession")
        co_return ok();
    auto s = registry::parse_scope(ctx.who.scope);
    if (!s)
        co_return denied("the credential's scope is unreadable");
    if (s->unrestricted())
        co_return ok();
    const bool read = is_read(ctx.header->method());
    if (s->read_only && !read)
        co_return denied("the credential is read-only");
    auto param = [&](std::string_view name) -> std::optional<std::string_view> {
        for (const auto& [n, v] : params)
            if (n == name)
                return std::string_view(v);
        return std::nullopt;
    };
    if (!s->bucket.empty()) {
        auto bucket = param("bucket");
        if (!bucket || *bucket != s->bucket)
            co_return denied("the credential is limited to bucket " + s->bucket);
        if (!s->prefix.empty() && !read)
            co_return denied("the credential is limited to keys under " + s->prefix);
        co_return ok();
    }
    if (!s->model.empty()) {
        auto team = param("team");
        auto model = param("model");
        if (!team || *team != s->team)
            co_return denied("the credential is limited to model " + s->team + "/" + s->model);
        if (!model) {
            if (operation == "getTeam" && s->alias.empty())
                co_return ok();
            co_return denied("the credential is limited to a model");
        }
        if (*model != s->model)
            co_return denied("the credential is limited to model " + s->team + "/" + s->model);
        if (!s->alias.empty()) {
            constexpr std::array<std::string_view, 5> alias_reads = {
                "getModel", "getAlias", "getVersion", "listVersionFiles", "getVersionManifest"};
            if (!one_of(alias_reads, operation))
                co_return denied("the credential is limited to alias " + s->alias);
            constexpr std::array<std::string_view, 2> refs = {"alias", "version"};
            for (auto name : refs)
                if (auto v = param(name); v && *v != s->alias)
                    co_return denied("the credential is limited to alias " + s->alias);
        }
        co_return ok();
    }
    // Read-only without a bucket or model: every read.
    co_return ok();
}

} // namespace depot::server
