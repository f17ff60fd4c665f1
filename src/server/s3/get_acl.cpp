// GetBucketAcl — https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketAcl.html
// GetObjectAcl — https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObjectAcl.html
// The stored grants (s3/acl.hpp), or the owner's FULL_CONTROL alone when there are none. Under
// BucketOwnerEnforced ACLs are disabled: the answer is the bucket owner's FULL_CONTROL, as on S3.
#include "s3/acl.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/s3/versioning.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {
namespace {

response acl_response(std::string_view stored, std::string_view owner_id, std::string_view display_name)
{
    auto acl = s3::acl_from_stored(stored);
    if (stored.empty())
        acl.grants.push_back({.type = s3::grantee_type::user,
                              .id = std::string(owner_id),
                              .permission = s3::acl_permission::full_control});
    return xml_response(s3::access_control_policy_xml(acl, owner_id, display_name));
}

} // namespace

asio::awaitable<result<response>> get_bucket_acl(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    const bool enforced = bucket->object_ownership == "BucketOwnerEnforced";
    co_return acl_response(enforced ? "" : bucket->acl, bucket->owner_id, bucket->owner_display_name);
}

asio::awaitable<result<response>> get_object_acl(request_context& ctx)
{
    auto version_id = version_id_of(ctx);
    if (!version_id)
        co_return std::move(version_id).error();
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto opened = co_await ctx.svc->objects.open_version(bucket->id, ctx.key, *version_id);
    if (!opened)
        co_return std::move(opened).error();
    const auto& v = opened->version;
    if (v.is_delete_marker)
        co_return delete_marker_response(ctx, v, version_id->has_value());
    const bool enforced = bucket->object_ownership == "BucketOwnerEnforced";
    std::string stored;
    if (!enforced)
        stored = co_await ctx.svc->objects.acl(v.row_id);
    auto res = enforced ? acl_response("", bucket->owner_id, bucket->owner_display_name)
                        : acl_response(stored, v.owner_id, v.owner_display_name);
    set_version_header(res, *bucket, v);
    co_return res;
}

} // namespace depot::server::s3op
