// GetObjectTagging — https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObjectTagging.html
#include "s3/responses.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/s3/versioning.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> get_object_tagging(request_context& ctx)
{
    auto version_id = version_id_of(ctx);
    if (!version_id)
        co_return std::move(version_id).error();
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto opened = co_await ctx.svc->objects.open_version(bucket->id, ctx.key, *version_id);
    if (!opened)
        co_return std::move(opened).error();
    const auto& v = opened->version;
    if (v.is_delete_marker)
        co_return delete_marker_response(ctx, v, version_id->has_value());
    auto res = xml_response(s3::tagging_xml(v.tags));
    set_version_header(res, *bucket, v);
    co_return res;
}

} // namespace depot::server::s3op
