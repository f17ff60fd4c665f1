// ListObjectsV2 — https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html
#include "s3/listing.hpp"
#include "server/s3/common.hpp"
#include "server/s3/listing_xml.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> list_objects_v2(request_context& ctx)
{
    if (ctx.param("list-type") != std::optional<std::string_view>("2"))
        co_return make_error(errc::invalid_argument, "Invalid List Type specified in Request", "list-type");
    auto p = listing_params_of(ctx);
    if (!p)
        co_return std::move(p).error();
    auto token = ctx.param("continuation-token");
    auto start_after = ctx.param("start-after");
    std::string after(start_after.value_or(""));
    // An empty token is no position (the first page, after start-after), as AWS and radosgw take it.
    if (token && !token->empty()) {
        auto decoded = s3::decode_continuation_token(*token);
        if (!decoded)
            co_return std::move(decoded).error();
        after = std::move(*decoded);
    }
    registry::list_request request{.bucket_id = 0,
                                   .prefix = p->prefix,
                                   .delimiter = p->delimiter,
                                   .after = after,
                                   .max_keys = p->max_keys};
    auto page = co_await list_page_of(ctx, std::move(request));
    if (!page)
        co_return std::move(page).error();
    s3::list_objects_v2_result out{.bucket = ctx.bucket,
                                   .prefix = p->prefix,
                                   .delimiter = p->delimiter,
                                   .max_keys = p->max_keys,
                                   .url_encoding = p->url_encoding,
                                   .is_truncated = page->truncated,
                                   .fetch_owner =
                                       ctx.param("fetch-owner") == std::optional<std::string_view>("true"),
                                   .contents = entries_of(*page),
                                   .common_prefixes = page->common_prefixes};
    if (token)
        out.continuation_token = std::string(*token);
    if (start_after)
        out.start_after = std::string(*start_after);
    if (page->truncated)
        out.next_continuation_token = s3::encode_continuation_token(page->last);
    co_return xml_response(s3::list_objects_v2_xml(out));
}

} // namespace depot::server::s3op
