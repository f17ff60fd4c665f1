// ListBuckets — https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListBuckets.html
#include "s3/listing.hpp"
#include "s3/responses.hpp"
#include "server/authorization.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

#include <algorithm>
#include <charconv>

namespace depot::server::s3op {
namespace {

/// max-buckets: 1 to 10000; absent, every bucket in one page (as S3 answers an unpaginated request).
result<std::size_t> max_buckets_of(const request_context& ctx)
{
    auto raw = ctx.param("max-buckets");
    if (!raw)
        return std::size_t(-1);
    unsigned n = 0;
    const auto* end = raw->data() + raw->size();
    const auto [ptr, ec] = std::from_chars(raw->data(), end, n);
    if (raw->empty() || ec != std::errc{} || ptr != end || n < 1 || n > 10000)
        return make_error(errc::invalid_argument, "max-buckets must be an integer from 1 to 10000",
                          "max-buckets");
    return std::size_t(n);
}

} // namespace

asio::awaitable<result<response>> list_buckets(request_context& ctx)
{
    auto max = max_buckets_of(ctx);
    if (!max)
        co_return std::move(max).error();
    const std::string prefix(ctx.param("prefix").value_or(""));
    const auto region = ctx.param("bucket-region");
    std::string after;
    if (auto token = ctx.param("continuation-token")) {
        auto decoded = s3::decode_continuation_token(*token);
        if (!decoded)
            co_return std::move(decoded).error();
        after = std::move(*decoded);
    }
    // A scoped credential lists only the bucket its scope reaches (a model's: the model's bucket), as an
    // AWS policy limited to one bucket would: the owner's other bucket names are none of its business.
    const auto area = co_await scope_area_of(ctx);
    auto buckets = co_await ctx.svc->buckets.list_owned(ctx.who.user_id);
    // In byte order, as S3 lists (the database orders by its collation): pages continue after a name.
    std::sort(buckets.begin(), buckets.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    s3::list_buckets_result out{.owner = {ctx.who.user_id, ctx.who.display_name}, .prefix = prefix};
    for (const auto& b : buckets) {
        if ((area && b.name != area->bucket) || !b.name.starts_with(prefix) ||
            (region && b.region != *region) || (!after.empty() && b.name <= after))
            continue;
        if (out.buckets.size() == *max) {
            out.continuation_token = s3::encode_continuation_token(out.buckets.back().name);
            break;
        }
        out.buckets.push_back({.name = b.name, .creation_date = b.created_at, .region = b.region});
    }
    co_return xml_response(s3::list_buckets_xml(out));
}

} // namespace depot::server::s3op
