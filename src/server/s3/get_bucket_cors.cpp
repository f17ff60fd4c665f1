// GetBucketCors — https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketCors.html
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> get_bucket_cors(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    if (bucket->cors.empty())
        co_return make_error(errc::no_such_cors_configuration, "The CORS configuration does not exist");
    co_return xml_response(std::move(bucket->cors));
}

} // namespace depot::server::s3op
