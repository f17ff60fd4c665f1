// DeleteObject — https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html
#include "server/s3/common.hpp"
#include "server/s3/delete_conditions.hpp"
#include "server/s3/object_lock.hpp"
#include "server/s3/operations.hpp"
#include "server/s3/versioning.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> delete_object(request_context& ctx)
{
    auto version_id = version_id_of(ctx);
    if (!version_id)
        co_return std::move(version_id).error();
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    const bool bypass = bypass_governance_of(ctx);
    // Deleting a key or a version that does not exist succeeds, as in S3 (unless a condition asks for it).
    registry::delete_request request{.bucket_id = bucket->id,
                                     .key = ctx.key,
                                     .version_id = *version_id,
                                     .owner_id = ctx.who.user_id,
                                     .bypass_governance = bypass};
    // Conditional deletes: checked with the delete, under the row lock
    // (registry/service/conditional_delete.hpp).
    if (ctx.get("if-none-match"))
        co_return make_error(errc::not_implemented,
                             "A header you provided implies functionality that is not implemented",
                             "If-None-Match");
    registry::delete_conditions conditions;
    if (auto valid = delete_conditions_of(conditions, ctx.get("if-match"), ctx.get("x-amz-if-match-size"),
                                          ctx.get("x-amz-if-match-last-modified-time"), "x-amz-if-match-size",
                                          "x-amz-if-match-last-modified-time");
        !valid)
        co_return std::move(valid).error();
    auto deleted = co_await registry::remove_object(ctx.audit, *ctx.svc->db, *ctx.svc->blobs,
                                                    std::move(request), std::move(conditions));
    if (!deleted)
        co_return std::move(deleted).error();
    response res;
    res.status = http::status::no_content;
    if (!deleted->version_id.empty())
        res.headers.set("x-amz-version-id", deleted->version_id);
    if (deleted->delete_marker)
        res.headers.set("x-amz-delete-marker", "true");
    co_return res;
}

} // namespace depot::server::s3op
