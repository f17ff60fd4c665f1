// UploadPart — https://docs.aws.amazon.com/AmazonS3/latest/API/API_UploadPart.html
// UploadPartCopy — https://docs.aws.amazon.com/AmazonS3/latest/API/API_UploadPartCopy.html
#include "s3/etag.hpp"
#include "s3/range.hpp"
#include "s3/responses.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/s3/sse.hpp"
#include "server/s3/versioning.hpp"
#include "server/services.hpp"

#include <algorithm>

namespace depot::server::s3op {
namespace {

/// How UploadPartCopy stores its part. A copied part references its source's blobs when it is to be stored
/// as the source is (plaintext from plaintext, SSE-S3 from SSE-S3); otherwise — into or out of encryption, or
/// anything SSE-C, whose blobs are sealed under one customer's key — the source range's plaintext is read and
/// written as an UploadPart of the upload's encryption (as CopyObject does, copy_object_encrypted.cpp).
struct part_copy_plan
{
    bool reencrypt = false;
    std::string customer_key; ///< the upload's SSE-C key (empty for an upload that is not SSE-C)
};

/// The source's SSE-C key (x-amz-copy-source-server-side-encryption-customer-*) is checked as a read's; the
/// upload's (x-amz-server-side-encryption-customer-*) is required for an SSE-C upload, as UploadPart's.
result<part_copy_plan> copy_part_encryption(const request_context& ctx,
                                            const registry::multipart_upload& upload,
                                            registry::object_handle& source)
{
    if (auto key = unlock_for_read(ctx, source, "x-amz-copy-source-"); !key)
        return std::move(key).error();
    auto own = upload_customer_key(ctx, upload, true);
    if (!own)
        return std::move(own).error();
    const auto wanted = registry::sealing_of(upload.sse);
    const bool same = wanted != registry::sealing::customer && source.version.sse != "SSE-C" &&
                      std::all_of(source.segments.begin(), source.segments.end(),
                                  [&](const registry::segment& s) { return s.sealed == wanted; });
    return part_copy_plan{.reencrypt = !same, .customer_key = std::move(*own)};
}

/// The bucket, the part number and the upload addressed by ?partNumber=N&uploadId=X.
struct part_target
{
    registry::bucket bucket;
    int part_number = 0;
    registry::multipart_upload upload;
};

asio::awaitable<result<part_target>> resolve_part(request_context& ctx)
{
    auto number = part_number_of(ctx);
    if (!number)
        co_return std::move(number).error();
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    // A part is no object: If-Match / If-None-Match belong on CompleteMultipartUpload, which checks them
    // against the key. Refused rather than ignored.
    for (std::string_view h : {"If-Match", "If-None-Match"})
        if (ctx.get(h))
            co_return make_error(errc::not_implemented,
                                 "A header you provided implies functionality that is not implemented",
                                 std::string(h));
    auto upload = co_await ctx.svc->multipart.find(bucket->id, ctx.key, ctx.param("uploadId").value_or(""));
    if (!upload)
        co_return std::move(upload).error();
    co_return part_target{std::move(*bucket), *number, std::move(*upload)};
}

} // namespace

asio::awaitable<result<response>> upload_part(request_context& ctx)
{
    if (!ctx.content_length && !ctx.get("transfer-encoding"))
        co_return make_error(errc::missing_content_length,
                             "You must provide the Content-Length HTTP header.");
    auto md5 = content_md5_of(ctx);
    if (!md5)
        co_return std::move(md5).error();
    auto checksum = checksum_request_of(ctx);
    if (!checksum)
        co_return std::move(checksum).error();
    auto target = co_await resolve_part(ctx);
    if (!target)
        co_return std::move(target).error();
    registry::ingest_limits limits{.content_length = ctx.content_length,
                                   .expected_md5 = std::move(*md5),
                                   .expected_sha256 = ctx.payload.sha256,
                                   .checksum = checksum->algorithm,
                                   .checksum_value = std::move(checksum->value),
                                   .trailer_checksum = std::move(checksum->trailer),
                                   .dedup = target->bucket.dedup};
    // An SSE-C upload's parts come with its key; each part is encrypted as the upload is.
    auto customer_key = upload_customer_key(ctx, target->upload, true);
    if (!customer_key)
        co_return std::move(customer_key).error();
    auto part = co_await ctx.svc->multipart.upload_part(ctx.audit, target->upload, target->part_number,
                                                        *ctx.body, limits, *customer_key);
    if (!part)
        co_return std::move(part).error();
    response res;
    registry::object_version encryption;
    encryption.sse = target->upload.sse;
    set_sse_headers(res, encryption, *customer_key);
    res.headers.set(http::field::etag, s3::quote_etag(part->etag));
    if (target->upload.algorithm)
        set_checksum_headers(res, to_string(*target->upload.algorithm), "", part->checksum);
    co_return res;
}

asio::awaitable<result<response>> upload_part_copy(request_context& ctx)
{
    auto source = parse_copy_source(*ctx.get("x-amz-copy-source"));
    if (!source)
        co_return std::move(source).error();
    if (source->version_id)
        if (auto valid = check_version_id(*source->version_id, "x-amz-copy-source"); !valid)
            co_return std::move(valid).error();
    auto target = co_await resolve_part(ctx);
    if (!target)
        co_return std::move(target).error();
    const auto source_version =
        source->version_id ? std::optional<std::string_view>(*source->version_id) : std::nullopt;
    auto source_bucket = co_await authorized_source_bucket(ctx, source->bucket, source->key, source_version);
    if (!source_bucket)
        co_return std::move(source_bucket).error();
    auto opened = co_await open_copy_source(ctx, source_bucket->id, source->key, source->version_id);
    if (!opened)
        co_return std::move(opened).error();
    const auto& src = opened->version;
    if (src.is_delete_marker) {
        if (source->version_id)
            co_return make_error(errc::invalid_request,
                                 "The source of a copy request may not specifically refer to a delete marker "
                                 "by version id.");
        co_return make_error(errc::no_such_key, "The specified key does not exist.");
    }

    if (auto met = check_copy_source_conditions(ctx, src); !met)
        co_return std::move(met).error();
    auto plan = copy_part_encryption(ctx, target->upload, *opened);
    if (!plan)
        co_return std::move(plan).error();

    std::uint64_t first = 0;
    std::uint64_t length = src.size;
    if (auto range_header = ctx.get("x-amz-copy-source-range")) {
        auto range = s3::parse_copy_source_range(*range_header, src.size);
        if (!range)
            co_return std::move(range).error();
        first = range->first;
        length = range->length();
    }
    // A snapshot's version need not be current (or even listed), as in CopyObject.
    const bool pinned = source->version_id.has_value() || registry::is_snapshot_key(source->key);
    result<registry::part_info> part = registry::part_info{};
    if (plan->reencrypt) {
        if (length > registry::max_copy_source_size)
            co_return make_error(errc::invalid_request,
                                 "The specified copy source is larger than the maximum allowable size for a "
                                 "copy source: " +
                                     std::to_string(registry::max_copy_source_size));
        auto body = ctx.svc->objects.read(*opened, first, length);
        registry::ingest_limits limits{.content_length = length, .dedup = target->bucket.dedup};
        part = co_await ctx.svc->multipart.upload_part(ctx.audit, target->upload, target->part_number, *body,
                                                       limits, plan->customer_key);
    } else {
        part = co_await ctx.svc->multipart.copy_part(ctx.audit, target->upload, target->part_number, *opened,
                                                     first, length, pinned);
    }
    if (!part)
        co_return std::move(part).error();
    auto res =
        xml_response(s3::copy_part_result_xml({.etag = part->etag, .last_modified = part->last_modified}));
    registry::object_version encryption;
    encryption.sse = target->upload.sse;
    set_sse_headers(res, encryption, plan->customer_key);
    if (src.version_id != "null" || source->version_id)
        res.headers.set("x-amz-copy-source-version-id", src.version_id);
    co_return res;
}

} // namespace depot::server::s3op
