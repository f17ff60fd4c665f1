// ListParts — https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListParts.html
#include "s3/listing.hpp"
#include "s3/responses.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> list_parts(request_context& ctx)
{
    auto max_parts = s3::parse_max_keys(ctx.param("max-parts"), "max-parts");
    if (!max_parts)
        co_return std::move(max_parts).error();
    auto marker = integer_of(ctx.param("part-number-marker"), "part-number-marker", 0, 0, 10000);
    if (!marker)
        co_return std::move(marker).error();
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto upload = co_await ctx.svc->multipart.find(bucket->id, ctx.key, ctx.param("uploadId").value_or(""));
    if (!upload)
        co_return std::move(upload).error();
    auto page = co_await ctx.svc->multipart.list_parts(*upload, *marker, static_cast<int>(*max_parts));
    if (!page)
        co_return std::move(page).error();
    s3::list_parts_result out{.bucket = bucket->name,
                              .key = ctx.key,
                              .upload_id = upload->upload_id,
                              .initiator = {upload->owner_id, upload->owner_display_name},
                              .owner = {upload->owner_id, upload->owner_display_name},
                              .part_number_marker = *marker,
                              .next_part_number_marker = page->next_marker,
                              .max_parts = static_cast<int>(*max_parts),
                              .is_truncated = page->truncated};
    for (const auto& p : page->parts) {
        s3::part_entry e{
            .part_number = p.part_number, .last_modified = p.last_modified, .etag = p.etag, .size = p.size};
        if (upload->algorithm)
            set_xml_checksum(e.checksum, to_string(*upload->algorithm), "", p.checksum);
        out.parts.push_back(std::move(e));
    }
    if (upload->algorithm) {
        out.checksum_algorithm = std::string(to_string(*upload->algorithm));
        out.checksum_type = std::string(to_string(upload->type));
    }
    co_return xml_response(s3::list_parts_xml(out));
}

} // namespace depot::server::s3op
