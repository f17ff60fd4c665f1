// DeleteBucketLifecycle — https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteBucketLifecycle.html
#include "registry/lifecycle.hpp"
#include "server/s3/common.hpp"
#include "server/s3/lifecycle_operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> delete_bucket_lifecycle(request_context& ctx)
{
    auto bucket = co_await authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    registry::lifecycle_service lifecycle(*ctx.svc->db, *ctx.svc->blobs, ctx.svc->multipart);
    // A row (and an audit entry) changes only when there was a configuration to remove.
    if (co_await lifecycle.configuration(bucket->id)) {
        auto set = co_await lifecycle.set_configuration(ctx.audit, bucket->name, std::nullopt);
        if (!set)
            co_return std::move(set).error();
    }
    response res;
    res.status = http::status::no_content;
    co_return res;
}

} // namespace depot::server::s3op
