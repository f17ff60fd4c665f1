// GetBucketLifecycleConfiguration —
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketLifecycleConfiguration.html
#include "registry/lifecycle.hpp"
#include "s3/errors.hpp"
#include "server/s3/common.hpp"
#include "server/s3/lifecycle_operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> get_bucket_lifecycle(request_context& ctx)
{
    auto bucket = co_await authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    registry::lifecycle_service lifecycle(*ctx.svc->db, *ctx.svc->blobs, ctx.svc->multipart);
    auto xml = co_await lifecycle.configuration(bucket->id);
    if (xml)
        co_return xml_response(std::move(*xml));
    // S3's 404 NoSuchLifecycleConfiguration, rendered here: the error table (common/error.hpp) gains the
    // code when it next changes.
    const std::string_view target = ctx.header->target();
    const s3::error_info info{.code = "NoSuchLifecycleConfiguration",
                              .status = 404,
                              .message = "The lifecycle configuration does not exist",
                              .argument_name = {},
                              .argument_value = {}};
    response res;
    res.status = http::status::not_found;
    res.headers.set(http::field::content_type, "application/xml");
    res.body = s3::error_xml(info, target.substr(0, target.find('?')), ctx.request_id);
    co_return res;
}

} // namespace depot::server::s3op
