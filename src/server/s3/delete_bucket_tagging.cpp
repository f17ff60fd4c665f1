// DeleteBucketTagging — https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteBucketTagging.html
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> delete_bucket_tagging(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    if (bucket->tags) {
        auto set = co_await ctx.svc->buckets.set_tags(ctx.audit, bucket->name, std::nullopt);
        if (!set)
            co_return std::move(set).error();
    }
    response res;
    res.status = http::status::no_content;
    co_return res;
}

} // namespace depot::server::s3op
