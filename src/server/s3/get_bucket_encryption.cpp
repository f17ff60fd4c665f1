// GetBucketEncryption — https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketEncryption.html
#include "s3/sse.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> get_bucket_encryption(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    if (bucket->encryption.empty())
        co_return make_error(errc::no_such_encryption_configuration,
                             "The server side encryption configuration was not found");
    co_return xml_response(s3::bucket_encryption_xml(bucket->encryption));
}

} // namespace depot::server::s3op
