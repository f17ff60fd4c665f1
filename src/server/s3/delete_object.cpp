// DeleteObject — https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> delete_object(request_context& ctx)
{
    auto bucket = co_await authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    // Deleting a key that does not exist succeeds, as in S3.
    auto deleted = co_await ctx.svc->objects.delete_object(bucket->id, ctx.key);
    if (!deleted)
        co_return std::move(deleted).error();
    response res;
    res.status = http::status::no_content;
    co_return res;
}

} // namespace depot::server::s3op
