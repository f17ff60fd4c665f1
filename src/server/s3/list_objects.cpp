// ListObjects — https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjects.html
#include "server/s3/common.hpp"
#include "server/s3/listing_xml.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> list_objects(request_context& ctx)
{
    auto p = listing_params_of(ctx);
    if (!p)
        co_return std::move(p).error();
    std::string marker(ctx.param("marker").value_or(""));
    registry::list_request request{.bucket_id = 0,
                                   .prefix = p->prefix,
                                   .delimiter = p->delimiter,
                                   .after = marker,
                                   .max_keys = p->max_keys};
    auto page = co_await list_page_of(ctx, std::move(request));
    if (!page)
        co_return std::move(page).error();
    co_return xml_response(s3::list_objects_xml({.bucket = ctx.bucket,
                                                 .prefix = p->prefix,
                                                 .delimiter = p->delimiter,
                                                 .marker = marker,
                                                 .max_keys = p->max_keys,
                                                 .url_encoding = p->url_encoding,
                                                 .is_truncated = page->truncated,
                                                 .next_marker = page->last,
                                                 .contents = entries_of(*page),
                                                 .common_prefixes = page->common_prefixes}));
}

} // namespace depot::server::s3op
