// PutObjectAcl — https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObjectAcl.html
// The grants of one object version (versionId, or the current one), in place: no new version. The
// bucket's owner, or a WRITE_ACP grantee of the version, sets them; audited as object.acl.
#include "server/s3/access.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/s3/versioning.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> put_object_acl(request_context& ctx)
{
    auto version_id = version_id_of(ctx);
    if (!version_id)
        co_return std::move(version_id).error();
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto opened = co_await ctx.svc->objects.open_version(bucket->id, ctx.key, *version_id);
    if (!opened)
        co_return std::move(opened).error();
    const auto& v = opened->version;
    if (v.is_delete_marker)
        co_return delete_marker_response(ctx, v, version_id->has_value());
    auto acl = co_await acl_of_put_acl(ctx, v.owner_id, bucket->owner_id, true);
    if (!acl)
        co_return std::move(acl).error();
    if (auto allowed = co_await check_acl_change(ctx, *bucket, *acl, v.owner_id); !allowed)
        co_return std::move(allowed).error();
    const bool default_acl = s3::is_owner_only(*acl, v.owner_id) && acl->grants.size() == 1;
    // A named value, not a temporary in the co_await's operand (GCC 12 destroys those twice).
    std::string stored;
    if (!default_acl)
        stored = s3::stored_acl(*acl);
    if (auto set = co_await ctx.svc->objects.set_acl(ctx.audit, v, std::move(stored)); !set) {
        if (!version_id->has_value() && set.error().code == errc::no_such_version) // deleted meanwhile
            co_return make_error(errc::no_such_key, "The specified key does not exist.");
        co_return std::move(set).error();
    }
    response res;
    set_version_header(res, *bucket, v);
    co_return res;
}

} // namespace depot::server::s3op
