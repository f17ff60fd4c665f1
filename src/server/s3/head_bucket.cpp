// HeadBucket — https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadBucket.html
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> head_bucket(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    response res;
    res.head_only = true;
    res.headers.set("x-amz-bucket-region", bucket->region);
    co_return res;
}

} // namespace depot::server::s3op
