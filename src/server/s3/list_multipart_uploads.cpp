// ListMultipartUploads — https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListMultipartUploads.html
#include "s3/listing.hpp"
#include "s3/responses.hpp"
#include "server/s3/common.hpp"
#include "server/s3/listing_xml.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> list_multipart_uploads(request_context& ctx)
{
    auto p = listing_params_of(ctx);
    if (!p)
        co_return std::move(p).error();
    auto max_uploads = s3::parse_max_keys(ctx.param("max-uploads"), "max-uploads");
    if (!max_uploads)
        co_return std::move(max_uploads).error();
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    registry::uploads_request request{.bucket_id = bucket->id,
                                      .prefix = p->prefix,
                                      .delimiter = p->delimiter,
                                      .key_marker = std::string(ctx.param("key-marker").value_or("")),
                                      .upload_id_marker =
                                          std::string(ctx.param("upload-id-marker").value_or("")),
                                      .max_uploads = *max_uploads};
    auto page = co_await ctx.svc->multipart.list_uploads(request);
    if (!page)
        co_return std::move(page).error();
    s3::list_uploads_result out{.bucket = bucket->name,
                                .prefix = p->prefix,
                                .delimiter = p->delimiter,
                                .key_marker = request.key_marker,
                                .upload_id_marker = request.upload_id_marker,
                                .next_key_marker = page->next_key_marker,
                                .next_upload_id_marker = page->next_upload_id_marker,
                                .max_uploads = *max_uploads,
                                .url_encoding = p->url_encoding,
                                .is_truncated = page->truncated,
                                .common_prefixes = page->common_prefixes};
    for (const auto& u : page->uploads)
        out.uploads.push_back({.key = u.key,
                               .upload_id = u.upload_id,
                               .initiator = {u.owner_id, u.owner_display_name},
                               .owner = {u.owner_id, u.owner_display_name},
                               .initiated = u.initiated,
                               // Declared at creation, as S3 lists them (clients read ChecksumType).
                               .checksum_algorithm = u.algorithm ? std::string(to_string(*u.algorithm)) : "",
                               .checksum_type = u.algorithm ? std::string(to_string(u.type)) : ""});
    co_return xml_response(s3::list_uploads_xml(out));
}

} // namespace depot::server::s3op
