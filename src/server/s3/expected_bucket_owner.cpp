#include "server/s3/expected_bucket_owner.hpp"

#include "server/s3/common.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {
namespace {

asio::awaitable<result<void>> check_owner(request_context& ctx, std::string_view bucket,
                                          std::string_view expected)
{
    auto b = co_await ctx.svc->buckets.get(bucket);
    if (!b) {
        if (b.error().code == errc::no_such_bucket)
            co_return ok();
        co_return std::move(b).error();
    }
    if (b->owner_id != expected)
        co_return make_error(errc::access_denied, "Access Denied");
    co_return ok();
}

} // namespace

asio::awaitable<result<void>> check_expected_bucket_owner(request_context& ctx)
{
    if (auto expected = ctx.get("x-amz-expected-bucket-owner"); expected && !ctx.bucket.empty())
        if (auto held = co_await check_owner(ctx, ctx.bucket, *expected); !held)
            co_return std::move(held).error();
    auto source_expected = ctx.get("x-amz-source-expected-bucket-owner");
    auto raw_source = ctx.get("x-amz-copy-source");
    if (!source_expected || !raw_source)
        co_return ok();
    auto source = parse_copy_source(*raw_source);
    if (!source) // the action answers the malformed source
        co_return ok();
    co_return co_await check_owner(ctx, source->bucket, *source_expected);
}

} // namespace depot::server::s3op
