// GetBucketLocation — https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketLocation.html
#include "s3/responses.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> get_bucket_location(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    co_return xml_response(s3::location_constraint_xml(bucket->region));
}

} // namespace depot::server::s3op
