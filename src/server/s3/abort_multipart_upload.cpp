// AbortMultipartUpload — https://docs.aws.amazon.com/AmazonS3/latest/API/API_AbortMultipartUpload.html
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> abort_multipart_upload(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto aborted =
        co_await ctx.svc->multipart.abort(ctx.audit, bucket->id, ctx.key, ctx.param("uploadId").value_or(""));
    if (!aborted)
        co_return std::move(aborted).error();
    response res;
    res.status = http::status::no_content;
    co_return res;
}

} // namespace depot::server::s3op
