#include "server/s3/access.hpp"

#include "server/authorization.hpp"
#include "server/s3/common.hpp"
#include "server/services.hpp"

#include <algorithm>

namespace depot::server::s3op {

result<std::optional<s3::access_control_list>> acl_headers_of(const request_context& ctx,
                                                              std::string_view owner_id,
                                                              std::string_view bucket_owner_id,
                                                              bool for_object)
{
    std::optional<s3::access_control_list> out;
    if (auto canned = ctx.get("x-amz-acl")) {
        auto c = s3::canned_acl_of(*canned, "x-amz-acl");
        if (!c)
            return std::move(c).error();
        out = s3::canned_grants(*c, owner_id, bucket_owner_id, for_object);
    }
    for (const auto& h : s3::grant_headers) {
        auto value = ctx.get(h.name);
        if (!value)
            continue;
        if (ctx.get("x-amz-acl"))
            return make_error(errc::invalid_request,
                              "Specifying both Canned ACLs and Header Grants is not allowed");
        if (!out)
            out.emplace();
        if (auto parsed = s3::parse_grant_header(*value, h.permission, h.name, *out); !parsed)
            return std::move(parsed).error();
    }
    return out;
}

asio::awaitable<result<void>> check_acl_change(request_context& ctx, const registry::bucket& b,
                                               s3::access_control_list& acl, std::string_view owner_id)
{
    // Grants by e-mail address are grants to the users with those addresses, as S3 resolves them: the
    // ACL decided and stored names user ids only (a grant it then repeats is dropped).
    s3::access_control_list resolved;
    for (auto& g : acl.grants) {
        if (!g.email.empty()) {
            auto id = co_await ctx.svc->credentials.user_with_email(g.email);
            if (!id)
                co_return std::move(id).error();
            g.id = std::move(*id);
            g.email.clear();
        }
        if (std::find(resolved.grants.begin(), resolved.grants.end(), g) == resolved.grants.end())
            resolved.grants.push_back(std::move(g));
    }
    acl = std::move(resolved);
    const bool beyond_owners =
        s3::is_public(acl) || std::any_of(acl.grants.begin(), acl.grants.end(), [&](const s3::acl_grant& g) {
            return g.type == s3::grantee_type::user && g.id != owner_id && g.id != b.owner_id;
        });
    if (b.object_ownership == "BucketOwnerEnforced" && beyond_owners)
        co_return make_error(errc::acl_not_supported,
                             "The bucket does not allow ACLs: its object ownership is BucketOwnerEnforced "
                             "(PutBucketOwnershipControls changes it)");
    for (std::size_t i = 0; i < acl.grants.size(); ++i) {
        const auto& g = acl.grants[i];
        if (g.type != s3::grantee_type::user || g.id == owner_id || g.id == b.owner_id)
            continue;
        bool seen = false;
        for (std::size_t j = 0; j < i && !seen; ++j)
            seen = acl.grants[j].type == s3::grantee_type::user && acl.grants[j].id == g.id;
        if (seen)
            continue;
        if (auto u = co_await ctx.svc->credentials.get_user(g.id); !u)
            co_return make_error(errc::invalid_argument, "Invalid id", "CanonicalUser/ID");
    }
    co_return auth::authorize(ctx.principal, auth::permission::write_acl,
                              auth::acl_change{.bucket = b.name,
                                               .has_models = b.has_models,
                                               .block_public = blocks_public_acls(ctx, b),
                                               .public_grants = s3::is_public(acl),
                                               .other_grantees = s3::grants_to_others(acl, b.owner_id)});
}

std::string stored_object_acl(const registry::bucket& b, std::string_view owner_id,
                              const std::optional<s3::access_control_list>& acl)
{
    const auto effective =
        acl ? *acl : s3::canned_grants(s3::canned_acl::private_acl, owner_id, b.owner_id, true);
    return s3::is_owner_only(effective, b.owner_id) ? std::string() : s3::stored_acl(effective);
}

asio::awaitable<result<std::optional<s3::access_control_list>>> object_acl_of_write(request_context& ctx,
                                                                                    const registry::bucket& b)
{
    auto acl = acl_headers_of(ctx, ctx.who.user_id, b.owner_id, true);
    if (!acl)
        co_return std::move(acl).error();
    if (*acl)
        if (auto allowed = co_await check_acl_change(ctx, b, **acl, ctx.who.user_id); !allowed)
            co_return std::move(allowed).error();
    co_return std::move(*acl);
}

result<void> authorize_write_attributes(const request_context& ctx, const registry::bucket& b,
                                        std::string_view key, bool sets_acl, bool sets_tags)
{
    for (const auto& [sets, action] : {std::pair{sets_acl, std::string_view("s3:PutObjectAcl")},
                                       std::pair{sets_tags, std::string_view("s3:PutObjectTagging")}})
        if (sets && policy_denies(ctx, b, action, key))
            return make_error(errc::access_denied, "Access Denied: the bucket policy denies " +
                                                       std::string(action) + ", which this write asks for");
    return ok();
}

asio::awaitable<result<s3::access_control_list>> acl_of_put_acl(request_context& ctx,
                                                                std::string_view owner_id,
                                                                std::string_view bucket_owner_id,
                                                                bool for_object)
{
    auto headers = acl_headers_of(ctx, owner_id, bucket_owner_id, for_object);
    if (!headers)
        co_return std::move(headers).error();
    auto body = co_await read_small_body(ctx, s3::max_acl_body);
    if (!body)
        co_return std::move(body).error();
    if (*headers) {
        if (!body->empty())
            co_return make_error(
                errc::invalid_request,
                "Specifying both an ACL header and an AccessControlPolicy body is not allowed");
        co_return std::move(**headers);
    }
    if (body->empty())
        co_return make_error(errc::malformed_acl,
                             "The request names no ACL: send x-amz-acl, x-amz-grant-* or an "
                             "AccessControlPolicy body");
    auto policy = s3::parse_access_control_policy(*body);
    if (!policy)
        co_return std::move(policy).error();
    if (policy->owner_id != owner_id)
        co_return make_error(errc::access_denied,
                             "Access Denied: the ACL's Owner must be the current owner (" +
                                 std::string(owner_id) + ")");
    co_return std::move(policy->acl);
}

asio::awaitable<result<bucket_access_request>> bucket_access_of_create(request_context& ctx)
{
    bucket_access_request out;
    if (auto o = ctx.get("x-amz-object-ownership")) {
        if (!s3::is_object_ownership(*o))
            co_return make_error(errc::invalid_argument, "Invalid x-amz-object-ownership header",
                                 "x-amz-object-ownership");
        out.ownership = std::string(*o);
    } else if (ctx.svc->opts.default_object_ownership != "BucketOwnerEnforced") {
        // The installation's default (--default-object-ownership), for clients written for ACL buckets.
        out.ownership = ctx.svc->opts.default_object_ownership;
    }
    auto acl = acl_headers_of(ctx, ctx.who.user_id, ctx.who.user_id, false);
    if (!acl)
        co_return std::move(acl).error();
    out.acl = std::move(*acl);
    if (!out.acl || s3::is_owner_only(*out.acl, ctx.who.user_id))
        co_return out;
    registry::bucket planned;
    planned.name = ctx.bucket;
    planned.owner_id = ctx.who.user_id;
    planned.object_ownership = out.ownership.value_or("BucketOwnerEnforced");
    if (planned.object_ownership == "BucketOwnerEnforced")
        co_return make_error(
            errc::acl_with_object_ownership,
            "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting: "
            "send x-amz-object-ownership: ObjectWriter or BucketOwnerPreferred");
    if (auto allowed = co_await check_acl_change(ctx, planned, *out.acl, ctx.who.user_id); !allowed)
        co_return std::move(allowed).error();
    co_return out;
}

asio::awaitable<result<void>> apply_bucket_access(request_context& ctx, const registry::bucket& b,
                                                  const bucket_access_request& access)
{
    using setting = registry::bucket_service::access_setting;
    // Named values, not temporaries in a co_await's operand (GCC 12 destroys those twice).
    if (access.ownership && *access.ownership != b.object_ownership) {
        std::optional<std::string> ownership = *access.ownership;
        auto set = co_await ctx.svc->buckets.set_access(ctx.audit, b.name, setting::object_ownership,
                                                        std::move(ownership));
        if (!set)
            co_return std::move(set).error();
    }
    if (access.acl && !s3::is_owner_only(*access.acl, b.owner_id)) {
        std::optional<std::string> stored = s3::stored_acl(*access.acl);
        auto set = co_await ctx.svc->buckets.set_access(ctx.audit, b.name, setting::acl, std::move(stored));
        if (!set)
            co_return std::move(set).error();
    }
    co_return ok();
}

} // namespace depot::server::s3op
