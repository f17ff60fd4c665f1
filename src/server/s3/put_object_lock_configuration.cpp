// PutObjectLockConfiguration —
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObjectLockConfiguration.html
// Turns Object Lock on (it stays on: versioning Enabled required, as AWS allows on an existing bucket) and
// sets or clears the default retention of new versions.
#include "server/s3/common.hpp"
#include "server/s3/object_lock.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> put_object_lock_configuration(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto body = co_await read_small_body(ctx, ctx.svc->opts.max_xml_body_bytes);
    if (!body)
        co_return std::move(body).error();
    auto config = s3::parse_object_lock_configuration(*body);
    if (!config)
        co_return std::move(config).error();
    auto set = co_await ctx.svc->buckets.set_object_lock(ctx.audit, bucket->name, config->rule);
    if (!set)
        co_return std::move(set).error();
    co_return response{};
}

} // namespace depot::server::s3op
