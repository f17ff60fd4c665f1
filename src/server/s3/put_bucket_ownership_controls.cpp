// PutBucketOwnershipControls —
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketOwnershipControls.html
// BucketOwnerEnforced disables ACLs (stored grants are void, ACL writes beyond the owners answer
// AccessControlListNotSupported); it is refused while the bucket's own ACL grants to others, as on S3.
#include "s3/acl.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> put_bucket_ownership_controls(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto body = co_await read_small_body(ctx, ctx.svc->opts.max_xml_body_bytes);
    if (!body)
        co_return std::move(body).error();
    auto ownership = s3::parse_ownership_controls(*body);
    if (!ownership)
        co_return std::move(ownership).error();
    if (*ownership == "BucketOwnerEnforced" &&
        !s3::is_owner_only(s3::acl_from_stored(bucket->acl), bucket->owner_id))
        co_return make_error(errc::acl_with_object_ownership,
                             "The bucket's ACL grants to others than its owner: set it to private first");
    auto set = co_await ctx.svc->buckets.set_access(
        ctx.audit, bucket->name, registry::bucket_service::access_setting::object_ownership,
        std::move(*ownership));
    if (!set)
        co_return std::move(set).error();
    co_return response{};
}

} // namespace depot::server::s3op
