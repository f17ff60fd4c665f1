// CompleteMultipartUpload — https://docs.aws.amazon.com/AmazonS3/latest/API/API_CompleteMultipartUpload.html
#include "s3/responses.hpp"
#include "s3/xml.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/s3/sse.hpp"
#include "server/services.hpp"

#include <charconv>

namespace depot::server::s3op {

asio::awaitable<result<response>> complete_multipart_upload(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
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
    for (auto& p : *listed) {
        const auto& c = p.checksum;
        registry::completed_part_ref ref;
        ref.part_number = p.part_number;
        ref.etag = std::move(p.etag);
        // A part lists at most one checksum, in the upload's algorithm.
        for (const auto* value : {&c.crc32, &c.crc32c, &c.crc64nvme, &c.sha1, &c.sha256})
            if (ref.checksum.empty())
                ref.checksum = *value;
        parts.push_back(std::move(ref));
    }
    registry::write_preconditions conditions;
    auto wanted = write_conditions_of(ctx);
    conditions.if_match = std::move(wanted.if_match);
    conditions.if_none_match = std::move(wanted.if_none_match);
    if (auto v = ctx.get("x-amz-mp-object-size")) {
        std::uint64_t size = 0;
        const auto* end = v->data() + v->size();
        const auto [ptr, ec] = std::from_chars(v->data(), end, size);
        if (v->empty() || ec != std::errc{} || ptr != end)
            co_return make_error(errc::invalid_argument, "x-amz-mp-object-size must be a number of bytes",
                                 "x-amz-mp-object-size");
        conditions.object_size = size;
    }
    for (const auto& f : *ctx.header)
        if (checksum_algorithm_from_header(f.name_string()))
            conditions.checksum = std::string(f.value());
    // SSE-C: the key need not come again, but a key that does must be the upload's.
    auto upload = co_await ctx.svc->multipart.find(bucket->id, ctx.key, ctx.param("uploadId").value_or(""));
    std::string customer_key;
    if (upload) {
        auto key = upload_customer_key(ctx, *upload, false);
        if (!key)
            co_return std::move(key).error();
        customer_key = std::move(*key);
    }
    auto done = co_await ctx.svc->multipart.complete(ctx.audit, bucket->id, ctx.key,
                                                     ctx.param("uploadId").value_or(""), std::move(parts),
                                                     std::move(conditions));
    if (!done)
        co_return std::move(done).error();
    s3::complete_multipart_result out;
    out.location = "/" + bucket->name + "/" + ctx.key;
    out.bucket = bucket->name;
    out.key = ctx.key;
    out.etag = done->etag;
    set_xml_checksum(out.checksum, done->checksum_algorithm, done->checksum_type, done->checksum_value);
    auto res = xml_response(s3::complete_multipart_upload_xml(out));
    set_checksum_headers(res, done->checksum_algorithm, done->checksum_type, done->checksum_value);
    set_sse_headers(res, *done, customer_key);
    if (done->version_id != "null")
        res.headers.set("x-amz-version-id", done->version_id);
    co_return res;
}

} // namespace depot::server::s3op
