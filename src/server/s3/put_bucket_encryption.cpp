// PutBucketEncryption — https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketEncryption.html
#include "s3/sse.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> put_bucket_encryption(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto body = co_await read_small_body(ctx, ctx.svc->opts.max_xml_body_bytes);
    if (!body)
        co_return std::move(body).error();
    auto algorithm = s3::parse_bucket_encryption(*body);
    if (!algorithm)
        co_return std::move(algorithm).error();
    // A default every later write would fail with is refused now, not stored.
    if (!ctx.svc->objects.has_sse_master_key())
        co_return make_error(
            errc::not_implemented,
            "Server side encryption specified but this server has no SSE master key configured "
            "(--sse-master-key-file)");
    auto set = co_await ctx.svc->buckets.set_encryption(ctx.audit, bucket->name, std::move(*algorithm));
    if (!set)
        co_return std::move(set).error();
    co_return response{};
}

} // namespace depot::server::s3op
