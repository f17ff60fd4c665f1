// PutObjectRetention — https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObjectRetention.html
// Sets a version's retention in place (no new version). Extending is always allowed; shortening, removing
// or changing the mode of a retention still in force only for GOVERNANCE with
// x-amz-bypass-governance-retention from a caller allowed to bypass, never for COMPLIANCE (checked by the
// registry under the version's row lock).
#include "server/s3/common.hpp"
#include "server/s3/object_lock.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

#include <chrono>

namespace depot::server::s3op {

asio::awaitable<result<response>> put_object_retention(request_context& ctx)
{
    auto target = co_await lock_target_of(ctx);
    if (!target)
        co_return std::move(target).error();
    auto body = co_await read_small_body(ctx, ctx.svc->opts.max_xml_body_bytes);
    if (!body)
        co_return std::move(body).error();
    auto wanted = s3::parse_retention(*body);
    if (!wanted)
        co_return std::move(wanted).error();
    if (*wanted && (*wanted)->retain_until <= std::chrono::system_clock::now())
        co_return make_error(errc::invalid_argument, "The retain until date must be in the future!",
                             "RetainUntilDate");
    const bool bypass = bypass_governance_of(ctx);
    const auto& v = target->version;
    if (auto set = co_await ctx.svc->objects.set_retention(ctx.audit, v, *wanted, bypass); !set)
        co_return std::move(set).error();
    response res;
    if (v.version_id != "null")
        res.headers.set("x-amz-version-id", v.version_id);
    co_return res;
}

} // namespace depot::server::s3op
