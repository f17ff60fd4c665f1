// DeleteBucketLifecycle — https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteBucketLifecycle.html
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> delete_bucket_lifecycle(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    // A row (and an audit entry) changes only when there was a configuration to remove.
    if (co_await ctx.svc->lifecycle.configuration(bucket->id)) {
        auto set = co_await ctx.svc->lifecycle.set_configuration(ctx.audit, bucket->name, std::nullopt);
        if (!set)
            co_return std::move(set).error();
    }
    response res;
    res.status = http::status::no_content;
    co_return res;
}

} // namespace depot::server::s3op
