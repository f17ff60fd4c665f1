// PutBucketCors — https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketCors.html
#include "s3/cors.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> put_bucket_cors(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto body = co_await read_small_body(ctx, ctx.svc->opts.max_xml_body_bytes);
    if (!body)
        co_return std::move(body).error();
    auto config = s3::parse_cors_configuration(*body);
    if (!config)
        co_return std::move(config).error();
    // Stored as GetBucketCors returns it: validated, re-serialized, nothing of the request's bytes verbatim.
    auto set =
        co_await ctx.svc->buckets.set_cors(ctx.audit, bucket->name, s3::cors_configuration_xml(*config));
    if (!set)
        co_return std::move(set).error();
    co_return response{};
}

} // namespace depot::server::s3op
