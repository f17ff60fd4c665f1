// PutPublicAccessBlock — https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutPublicAccessBlock.html
// BlockPublicAcls refuses public grants on later writes (AccessDenied); IgnorePublicAcls voids stored ones.
// BlockPublicPolicy and RestrictPublicBuckets are stored and answered (Depot has no bucket policies yet).
// The installation's --allow-public-access off acts as all four set, whatever a bucket says.
#include "s3/acl.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> put_public_access_block(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto body = co_await read_small_body(ctx, ctx.svc->opts.max_xml_body_bytes);
    if (!body)
        co_return std::move(body).error();
    auto flags = s3::parse_public_access_block(*body);
    if (!flags)
        co_return std::move(flags).error();
    auto set = co_await ctx.svc->buckets.set_access(
        ctx.audit, bucket->name, registry::bucket_service::access_setting::public_access_block,
        std::move(*flags));
    if (!set)
        co_return std::move(set).error();
    co_return response{};
}

} // namespace depot::server::s3op
