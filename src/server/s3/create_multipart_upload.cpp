// CreateMultipartUpload — https://docs.aws.amazon.com/AmazonS3/latest/API/API_CreateMultipartUpload.html
#include "s3/responses.hpp"
#include "server/s3/access.hpp"
#include "server/s3/common.hpp"
#include "server/s3/object_lock.hpp"
#include "server/s3/operations.hpp"
#include "server/s3/sse.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> create_multipart_upload(request_context& ctx)
{
    if (auto k = check_key(ctx.key); !k)
        co_return std::move(k).error();
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto headers = object_headers_of(ctx);
    if (!headers)
        co_return std::move(headers).error();
    auto tags = tagging_header_of(ctx);
    if (!tags)
        co_return std::move(tags).error();
    auto lock = lock_request_of(ctx, *bucket);
    if (!lock)
        co_return std::move(lock).error();
    if (auto may = co_await authorize_requested_lock(ctx, *bucket, ctx.key, *lock); !may)
        co_return std::move(may).error();
    std::optional<checksum_algorithm> algorithm;
    std::optional<checksum_type> type;
    if (auto a = ctx.get("x-amz-checksum-algorithm")) {
        algorithm = parse_checksum_algorithm(*a);
        if (!algorithm)
            co_return make_error(errc::invalid_request, "Checksum algorithm provided is unsupported.");
    }
    if (auto t = ctx.get("x-amz-checksum-type")) {
        type = parse_checksum_type(*t);
        if (!type)
            co_return make_error(errc::invalid_request, "Value for x-amz-checksum-type header is invalid.");
    }
    auto sse = write_encryption(ctx, *bucket);
    if (!sse)
        co_return std::move(sse).error();
    // The ACL is checked now, as PutObject's, and given to the object at CompleteMultipartUpload.
    auto acl = co_await object_acl_of_write(ctx, *bucket);
    if (!acl)
        co_return std::move(acl).error();
    if (auto may = authorize_write_attributes(ctx, *bucket, ctx.key, acl->has_value(), !tags->empty()); !may)
        co_return std::move(may).error();
    const std::string stored_acl = stored_object_acl(*bucket, ctx.who.user_id, *acl);
    auto upload =
        co_await ctx.svc->multipart.create(ctx.audit, *bucket, ctx.key, ctx.who.user_id, std::move(*headers),
                                           algorithm, type, std::move(*tags), *lock, *sse, stored_acl);
    if (!upload)
        co_return std::move(upload).error();
    auto res = xml_response(s3::initiate_multipart_upload_xml(
        {.bucket = bucket->name, .key = ctx.key, .upload_id = upload->upload_id}));
    if (upload->algorithm) {
        res.headers.set("x-amz-checksum-algorithm", to_string(*upload->algorithm));
        res.headers.set("x-amz-checksum-type", to_string(upload->type));
    }
    set_sse_headers(res, *sse);
    co_return res;
}

} // namespace depot::server::s3op
