// CompleteMultipartUpload — https://docs.aws.amazon.com/AmazonS3/latest/API/API_CompleteMultipartUpload.html
#include "s3/responses.hpp"
#include "s3/xml.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> complete_multipart_upload(request_context& ctx)
{
    auto bucket = co_await authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto body = co_await read_small_body(ctx, ctx.svc->opts.max_xml_body_bytes);
    if (!body)
        co_return std::move(body).error();
    auto listed = s3::parse_complete_multipart_upload(*body);
    if (!listed)
        co_return std::move(listed).error();
    std::vector<registry::completed_part_ref> parts;
    parts.reserve(listed->size());
    for (auto& p : *listed)
        parts.push_back({.part_number = p.part_number, .etag = std::move(p.etag)});
    auto done = co_await ctx.svc->multipart.complete(bucket->id, ctx.key, ctx.param("uploadId").value_or(""),
                                                     std::move(parts));
    if (!done)
        co_return std::move(done).error();
    co_return xml_response(s3::complete_multipart_upload_xml({.location = "/" + bucket->name + "/" + ctx.key,
                                                              .bucket = bucket->name,
                                                              .key = ctx.key,
                                                              .etag = done->etag}));
}

} // namespace depot::server::s3op
