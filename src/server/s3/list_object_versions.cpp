// ListObjectVersions — https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectVersions.html
#include "server/s3/common.hpp"
#include "server/s3/listing_xml.hpp"
#include "server/s3/operations.hpp"
#include "server/s3/versioning.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> list_object_versions(request_context& ctx)
{
    auto p = listing_params_of(ctx);
    if (!p)
        co_return std::move(p).error();
    std::string key_marker(ctx.param("key-marker").value_or(""));
    std::string version_id_marker(ctx.param("version-id-marker").value_or(""));
    if (!version_id_marker.empty()) {
        if (key_marker.empty())
            co_return make_error(errc::invalid_argument,
                                 "A version-id marker cannot be specified without a key marker.",
                                 "version-id-marker");
        if (auto valid = check_version_id(version_id_marker, "version-id-marker"); !valid)
            co_return std::move(valid).error();
    }
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    registry::list_versions_request request{.bucket_id = bucket->id,
                                            .prefix = p->prefix,
                                            .delimiter = p->delimiter,
                                            .key_marker = key_marker,
                                            .version_id_marker = version_id_marker,
                                            .max_keys = p->max_keys};
    auto page = co_await ctx.svc->objects.list_versions(std::move(request));
    if (!page)
        co_return std::move(page).error();

    s3::list_versions_result out{.bucket = bucket->name,
                                 .prefix = p->prefix,
                                 .delimiter = p->delimiter,
                                 .key_marker = std::move(key_marker),
                                 .version_id_marker = std::move(version_id_marker),
                                 .max_keys = p->max_keys,
                                 .url_encoding = p->url_encoding,
                                 .is_truncated = page->truncated,
                                 .next_key_marker = page->next_key_marker,
                                 .next_version_id_marker = page->next_version_id_marker,
                                 .entries = {},
                                 .common_prefixes = page->common_prefixes};
    out.entries.reserve(page->entries.size());
    for (const auto& e : page->entries)
        out.entries.push_back({.key = e.key,
                               .version_id = e.version_id,
                               .is_latest = e.is_latest,
                               .is_delete_marker = e.is_delete_marker,
                               .last_modified = e.last_modified,
                               .etag = e.etag,
                               .size = e.size,
                               .storage_class = "STANDARD",
                               .owner = {e.owner_id, e.owner_display_name},
                               .checksum_algorithm = e.checksum_algorithm,
                               .checksum_type = e.checksum_type});
    co_return xml_response(s3::list_versions_xml(out));
}

} // namespace depot::server::s3op
