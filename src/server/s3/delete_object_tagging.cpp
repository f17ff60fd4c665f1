// DeleteObjectTagging — https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObjectTagging.html
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/s3/versioning.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> delete_object_tagging(request_context& ctx)
{
    auto version_id = version_id_of(ctx);
    if (!version_id)
        co_return std::move(version_id).error();
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    co_return co_await set_object_tags(ctx, *bucket, *version_id, {}, http::status::no_content);
}

} // namespace depot::server::s3op
