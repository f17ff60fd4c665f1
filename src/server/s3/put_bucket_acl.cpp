// PutBucketAcl — https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketAcl.html
// The bucket's owner, or a WRITE_ACP grantee, replaces its grants (x-amz-acl, x-amz-grant-* or an
// AccessControlPolicy body), within the rules of server/s3/access.hpp (ownership controls, public access
// blocks, models buckets). Audited as bucket.acl.
#include "server/s3/access.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> put_bucket_acl(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto acl = co_await acl_of_put_acl(ctx, bucket->owner_id, bucket->owner_id, false);
    if (!acl)
        co_return std::move(acl).error();
    if (auto allowed = co_await check_acl_change(ctx, *bucket, *acl, bucket->owner_id); !allowed)
        co_return std::move(allowed).error();
    std::optional<std::string> stored;
    if (!s3::is_owner_only(*acl, bucket->owner_id) || acl->grants.size() != 1)
        stored = s3::stored_acl(*acl);
    auto set = co_await ctx.svc->buckets.set_access(
        ctx.audit, bucket->name, registry::bucket_service::access_setting::acl, std::move(stored));
    if (!set)
        co_return std::move(set).error();
    co_return response{};
}

} // namespace depot::server::s3op
