// DeleteBucket — https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteBucket.html
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> delete_bucket(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto removed = co_await ctx.svc->buckets.remove(ctx.audit, ctx.bucket);
    if (!removed && removed.error().code == errc::conflict) {
        // Only uploads in progress remain: abort them (releasing their parts) and delete the bucket.
        co_await ctx.svc->multipart.abort_all(ctx.audit, bucket->id);
        removed = co_await ctx.svc->buckets.remove(ctx.audit, ctx.bucket);
    }
    if (!removed)
        co_return std::move(removed).error();
    response res;
    res.status = http::status::no_content;
    co_return res;
}

} // namespace depot::server::s3op
