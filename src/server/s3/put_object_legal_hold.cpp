// PutObjectLegalHold — https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObjectLegalHold.html
// A legal hold blocks deletion whatever the retention, until it is turned OFF (no bypass applies).
#include "server/s3/common.hpp"
#include "server/s3/object_lock.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> put_object_legal_hold(request_context& ctx)
{
    auto target = co_await lock_target_of(ctx);
    if (!target)
        co_return std::move(target).error();
    auto body = co_await read_small_body(ctx, ctx.svc->opts.max_xml_body_bytes);
    if (!body)
        co_return std::move(body).error();
    auto on = s3::parse_legal_hold(*body);
    if (!on)
        co_return std::move(on).error();
    const auto& v = target->version;
    if (auto set = co_await ctx.svc->objects.set_legal_hold(ctx.audit, v, *on); !set)
        co_return std::move(set).error();
    response res;
    if (v.version_id != "null")
        res.headers.set("x-amz-version-id", v.version_id);
    co_return res;
}

} // namespace depot::server::s3op
