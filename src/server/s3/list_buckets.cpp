// ListBuckets — https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListBuckets.html
#include "s3/responses.hpp"
#include "server/authorization.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> list_buckets(request_context& ctx)
{
    // A scoped credential lists only the bucket its scope reaches (a model's: the model's bucket), as an
    // AWS policy limited to one bucket would: the owner's other bucket names are none of its business.
    const auto area = co_await scope_area_of(ctx);
    auto buckets = co_await ctx.svc->buckets.list_owned(ctx.who.user_id);
    s3::list_buckets_result out{.owner = {ctx.who.user_id, ctx.who.display_name}};
    for (const auto& b : buckets)
        if (!area || b.name == area->bucket)
            out.buckets.push_back({.name = b.name, .creation_date = b.created_at, .region = b.region});
    co_return xml_response(s3::list_buckets_xml(out));
}

} // namespace depot::server::s3op
