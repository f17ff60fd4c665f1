// GetPublicAccessBlock — https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetPublicAccessBlock.html
#include "s3/acl.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> get_public_access_block(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    if (bucket->public_access_block.empty())
        co_return make_error(errc::no_such_public_access_block,
                             "The public access block configuration was not found");
    co_return xml_response(s3::public_access_block_xml(bucket->public_access_block));
}

} // namespace depot::server::s3op
