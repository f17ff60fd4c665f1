// DeleteBucketOwnershipControls —
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteBucketOwnershipControls.html
// Without ownership controls a bucket behaves as ObjectWriter (ACLs enabled), as on S3.
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> delete_bucket_ownership_controls(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto set = co_await ctx.svc->buckets.set_access(
        ctx.audit, bucket->name, registry::bucket_service::access_setting::object_ownership, std::nullopt);
    if (!set)
        co_return std::move(set).error();
    response res;
    res.status = http::status::no_content;
    co_return res;
}

} // namespace depot::server::s3op
