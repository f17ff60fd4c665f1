// PutObject — https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html
#include "s3/etag.hpp"
#include "server/s3/access.hpp"
#include "server/s3/common.hpp"
#include "server/s3/object_lock.hpp"
#include "server/s3/operations.hpp"
#include "server/s3/sse.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> put_object(request_context& ctx)
{
    if (auto k = check_key(ctx.key); !k)
        co_return std::move(k).error();
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    if (!ctx.content_length && !ctx.get("transfer-encoding"))
        co_return make_error(errc::missing_content_length,
                             "You must provide the Content-Length HTTP header.");
    auto headers = object_headers_of(ctx);
    if (!headers)
        co_return std::move(headers).error();
    auto md5 = content_md5_of(ctx);
    if (!md5)
        co_return std::move(md5).error();
    auto checksum = checksum_request_of(ctx);
    if (!checksum)
        co_return std::move(checksum).error();
    auto tags = tagging_header_of(ctx);
    if (!tags)
        co_return std::move(tags).error();
    auto lock = lock_request_of(ctx, *bucket);
    if (!lock)
        co_return std::move(lock).error();
    if (auto may = co_await authorize_requested_lock(ctx, *bucket, ctx.key, *lock); !may)
        co_return std::move(may).error();
    // S3 wants an integrity check on every write that locks what it writes.
    if (lock->any() && md5->empty() && !checksum->algorithm)
        co_return make_error(errc::invalid_request,
                             "Content-MD5 OR x-amz-checksum- HTTP header is required for "
                             "Put Object requests with Object Lock parameters");
    auto acl = co_await object_acl_of_write(ctx, *bucket);
    if (!acl)
        co_return std::move(acl).error();
    if (auto may = authorize_write_attributes(ctx, *bucket, ctx.key, acl->has_value(), !tags->empty()); !may)
        co_return std::move(may).error();
    auto sse = write_encryption(ctx, *bucket);
    if (!sse)
        co_return std::move(sse).error();
    if (ctx.content_length && *ctx.content_length > (5ull << 30))
        co_return make_error(errc::entity_too_large, "Your proposed upload exceeds the maximum allowed size");

    // A named request: GCC 12 destroys aggregate temporaries in a co_await operand twice.
    registry::put_object_request request{.target = &*bucket,
                                         .key = ctx.key,
                                         .owner_id = ctx.who.user_id,
                                         .headers = std::move(*headers),
                                         .content_length = ctx.content_length,
                                         .expected_md5 = std::move(*md5),
                                         .expected_sha256 = ctx.payload.sha256,
                                         .checksum = checksum->algorithm,
                                         .checksum_value = std::move(checksum->value),
                                         .trailer_checksum = std::move(checksum->trailer),
                                         .body = ctx.body,
                                         .tags = std::move(*tags),
                                         .retention = lock->retention,
                                         .legal_hold = lock->legal_hold,
                                         .sse = *sse,
                                         .acl = stored_object_acl(*bucket, ctx.who.user_id, *acl)};
    auto conditions = write_conditions_of(ctx);
    request.if_match = std::move(conditions.if_match);
    request.if_none_match = std::move(conditions.if_none_match);
    auto stored = co_await ctx.svc->objects.put_object(ctx.audit, std::move(request));
    if (!stored)
        co_return std::move(stored).error();
    response res;
    res.headers.set(http::field::etag, s3::quote_etag(stored->etag));
    set_checksum_headers(res, stored->checksum_algorithm, stored->checksum_type, stored->checksum_value);
    set_sse_headers(res, *sse);
    if (stored->version_id != "null")
        res.headers.set("x-amz-version-id", stored->version_id);
    co_return res;
}

} // namespace depot::server::s3op
