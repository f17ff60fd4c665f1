// GetBucketLifecycleConfiguration —
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketLifecycleConfiguration.html
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> get_bucket_lifecycle(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto xml = co_await ctx.svc->lifecycle.configuration(bucket->id);
    if (!xml)
        co_return make_error(errc::no_such_lifecycle_configuration,
                             "The lifecycle configuration does not exist");
    co_return xml_response(std::move(*xml));
}

} // namespace depot::server::s3op
