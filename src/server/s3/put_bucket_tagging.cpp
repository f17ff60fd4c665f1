// PutBucketTagging — https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketTagging.html
#include "s3/xml.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> put_bucket_tagging(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto body = co_await read_small_body(ctx, ctx.svc->opts.max_xml_body_bytes);
    if (!body)
        co_return std::move(body).error();
    auto tags = s3::parse_tagging(*body, s3::max_bucket_tags);
    if (!tags)
        co_return std::move(tags).error();
    // An empty TagSet leaves the bucket without tags, as DeleteBucketTagging does.
    std::optional<std::vector<s3::tag>> stored;
    if (!tags->empty())
        stored = std::move(*tags);
    if (stored || bucket->tags) {
        auto set = co_await ctx.svc->buckets.set_tags(ctx.audit, bucket->name, std::move(stored));
        if (!set)
            co_return std::move(set).error();
    }
    response res;
    res.status = http::status::no_content;
    co_return res;
}

} // namespace depot::server::s3op
