// PutBucketVersioning — https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketVersioning.html
#include "registry/vocabulary.hpp"
#include "s3/xml.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> put_bucket_versioning(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto body = co_await read_small_body(ctx, ctx.svc->opts.max_xml_body_bytes);
    if (!body)
        co_return std::move(body).error();
    auto config = s3::parse_versioning_configuration(*body);
    if (!config)
        co_return std::move(config).error();
    // Without a Status there is nothing to set, and a bucket can never return to "unversioned".
    if (!config->status)
        co_return make_error(errc::malformed_xml,
                             "The XML you provided was not well-formed or did not validate against our "
                             "published schema");
    const auto mode = *config->status == s3::versioning_status::enabled
                          ? registry::versioning_mode::enabled
                          : registry::versioning_mode::suspended;
    auto set = co_await ctx.svc->objects.set_versioning(ctx.audit, bucket->id, mode);
    if (!set)
        co_return std::move(set).error();
    co_return response{};
}

} // namespace depot::server::s3op
