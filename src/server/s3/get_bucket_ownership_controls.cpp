// GetBucketOwnershipControls —
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketOwnershipControls.html
#include "s3/acl.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> get_bucket_ownership_controls(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    if (bucket->object_ownership.empty())
        co_return make_error(errc::no_such_ownership_controls,
                             "The bucket ownership controls were not found");
    co_return xml_response(s3::ownership_controls_xml(bucket->object_ownership));
}

} // namespace depot::server::s3op
