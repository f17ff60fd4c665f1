// DeleteBucketCors — https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteBucketCors.html
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> delete_bucket_cors(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    if (!bucket->cors.empty()) {
        auto set = co_await ctx.svc->buckets.set_cors(ctx.audit, bucket->name, std::nullopt);
        if (!set)
            co_return std::move(set).error();
    }
    response res;
    res.status = http::status::no_content;
    co_return res;
}

} // namespace depot::server::s3op
