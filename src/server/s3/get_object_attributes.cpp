// GetObjectAttributes — https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObjectAttributes.html
#include "common/http_date.hpp"
#include "s3/responses.hpp"
#include "server/authorization.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/s3/sse.hpp"
#include "server/s3/versioning.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {
asio::awaitable<result<response>> get_object_attributes(request_context& ctx)
{
    auto wanted = ctx.get("x-amz-object-attributes");
    if (!wanted || wanted->empty())
        co_return make_error(errc::invalid_argument,
                             "The x-amz-object-attributes header specifying the attributes "
                             "to be retrieved is either missing or empty",
                             "x-amz-object-attributes");
    bool etag = false, checksum = false, parts = false, storage_class = false, size = false;
    std::string_view rest = *wanted;
    while (!rest.empty()) {
        auto comma = rest.find(',');
        auto item = rest.substr(0, comma);
        while (!item.empty() && item.front() == ' ')
            item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ')
            item.remove_suffix(1);
        if (item == "ETag")
            etag = true;
        else if (item == "Checksum")
            checksum = true;
        else if (item == "ObjectParts")
            parts = true;
        else if (item == "StorageClass")
            storage_class = true;
        else if (item == "ObjectSize")
            size = true;
        else
            co_return make_error(errc::invalid_argument, "Invalid attribute name specified.",
                                 "x-amz-object-attributes");
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
    auto max_parts = integer_of(ctx.get("x-amz-max-parts"), "x-amz-max-parts", 1000, 0, 1000000);
    if (!max_parts)
        co_return std::move(max_parts).error();
    auto marker = integer_of(ctx.get("x-amz-part-number-marker"), "x-amz-part-number-marker", 0, 0, 10000);
    if (!marker)
        co_return std::move(marker).error();

    auto version_id = version_id_of(ctx);
    if (!version_id)
        co_return std::move(version_id).error();

    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    // A Deny of s3:GetObject (s3:GetObjectVersion for a version) refuses the attributes too, as on AWS, which
    // asks both: the size, ETag and SHA-256 of an object one may not read would confirm a guessed content.
    if (policy_denies(ctx, *bucket, version_id->has_value() ? "s3:GetObjectVersion" : "s3:GetObject",
                      ctx.key))
        co_return make_error(errc::access_denied, "Access Denied by the bucket policy");
    auto opened = co_await ctx.svc->objects.open_version(bucket->id, ctx.key, *version_id);
    if (!opened)
        co_return std::move(opened).error();
    if (opened->version.is_delete_marker)
        co_return delete_marker_response(ctx, opened->version, version_id->has_value());
    // As GetObject and HeadObject: an SSE-C object's attributes need its key (400 without, 403 another).
    if (auto unlocked = unlock_for_read(ctx, *opened); !unlocked)
        co_return std::move(unlocked).error();
    const auto& v = opened->version;

    s3::object_attributes out;
    if (etag)
        out.etag = v.etag;
    if (checksum && !v.checksum_value.empty()) {
        s3::checksums c;
        // A COMPOSITE value keeps its "-N" part-count suffix, as S3 reports it (and as GetObject/HeadObject
        // do).
        set_xml_checksum(c, v.checksum_algorithm, v.checksum_type, v.checksum_value);
        // Depot knows every single-PUT object's SHA-256 (and a multipart object's once a model version
        // included it): reported next to the upload's own checksum when that one is a full-object one.
        if (v.checksum_type == "FULL_OBJECT" && v.sha256.size() == 32 && c.sha256.empty())
            c.sha256 = encode_checksum(v.sha256);
        out.checksum = std::move(c);
    }
    if (parts && v.parts_count) {
        auto all = co_await ctx.svc->objects.parts(v.row_id);
        s3::object_parts p;
        p.total_parts_count = *v.parts_count;
        p.part_number_marker = *marker;
        p.max_parts = *max_parts;
        for (const auto& part : all) {
            if (part.part_number <= *marker)
                continue;
            if (static_cast<int>(p.parts.size()) == *max_parts) {
                p.is_truncated = true;
                break;
            }
            s3::object_part e{.part_number = part.part_number, .size = part.size};
            if (v.checksum_type == "COMPOSITE")
                set_xml_checksum(e.checksum, v.checksum_algorithm, "", part.checksum);
            p.parts.push_back(std::move(e));
        }
        if (!p.parts.empty())
            p.next_part_number_marker = p.parts.back().part_number;
        out.parts = std::move(p);
    }
    if (storage_class)
        out.storage_class = "STANDARD";
    if (size)
        out.object_size = v.size;
    auto res = xml_response(s3::object_attributes_xml(out));
    res.headers.set(http::field::last_modified, format_http_date(v.last_modified));
    set_version_header(res, *bucket, v);
    co_return res;
}

} // namespace depot::server::s3op
