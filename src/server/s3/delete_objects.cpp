// DeleteObjects — https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObjects.html
#include "s3/delete_conditions_xml.hpp"
#include "s3/errors.hpp"
#include "s3/responses.hpp"
#include "s3/xml.hpp"
#include "server/audit_requests.hpp"
#include "server/authorization.hpp"
#include "server/s3/common.hpp"
#include "server/s3/delete_conditions.hpp"
#include "server/s3/object_lock.hpp"
#include "server/s3/operations.hpp"
#include "server/s3/versioning.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> delete_objects(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    const bool bypass = bypass_governance_of(ctx);
    auto body = co_await read_small_body(ctx, ctx.svc->opts.max_xml_body_bytes);
    if (!body)
        co_return std::move(body).error();
    auto request = s3::parse_delete_objects(*body);
    if (!request)
        co_return std::move(request).error();
    auto conditions = s3::parse_delete_objects_conditions(*body);
    if (!conditions)
        co_return std::move(conditions).error();

    s3::delete_result out{.quiet = request->quiet};
    for (std::size_t i = 0; i < request->objects.size(); ++i) {
        const auto& object = request->objects[i];
        const auto& wanted = (*conditions)[i];
        result<void> outcome = check_key(object.key);
        if (outcome && registry::is_snapshot_key(object.key))
            outcome = make_error(errc::access_denied, "Snapshots are read-only");
        if (outcome && object.version_id)
            outcome = check_version_id(*object.version_id, "VersionId");
        // With a bucket policy, each key is authorized on its own: its Deny (or, for others than the owner,
        // its Allow) is about that key. So is every version delete: an ACL WRITE grant does not allow it.
        if (outcome && (bucket->parsed_policy || object.version_id)) {
            const std::string_view action = object.version_id ? "s3:DeleteObjectVersion" : "s3:DeleteObject";
            // The key's VersionId is the policy's s3:VersionId, as the query's is for DeleteObject.
            const auto version =
                object.version_id ? std::optional<std::string_view>(*object.version_id) : std::nullopt;
            outcome = co_await authorize_bucket_access(ctx, auth::permission::delete_objects, *bucket,
                                                       object.key, action, true, version);
        }
        std::optional<registry::delete_outcome> removed;
        if (outcome) {
            registry::delete_request request{.bucket_id = bucket->id,
                                             .key = object.key,
                                             .version_id = object.version_id,
                                             .owner_id = ctx.who.user_id,
                                             .bypass_governance = bypass};
            auto opt = [](const std::optional<std::string>& v) {
                return v ? std::optional<std::string_view>(*v) : std::nullopt;
            };
            registry::delete_conditions checks;
            outcome = delete_conditions_of(checks, opt(wanted.etag), opt(wanted.size),
                                           opt(wanted.last_modified_time), "Size", "LastModifiedTime");
            if (outcome) {
                auto r = co_await registry::remove_object(ctx.audit, *ctx.svc->db, *ctx.svc->blobs,
                                                          std::move(request), std::move(checks));
                if (r)
                    removed = std::move(*r);
                else
                    outcome = std::move(r).error();
            }
        }
        if (outcome) {
            s3::deleted_entry done;
            done.key = object.key;
            done.version_id = object.version_id.value_or("");
            done.delete_marker = removed->delete_marker;
            if (removed->delete_marker)
                done.delete_marker_version_id = removed->version_id;
            out.deleted.push_back(std::move(done));
        } else {
            // A key refused to an authenticated caller is a refusal as DeleteObject's would be: a row of
            // its own (the request as a whole succeeds, so the dispatcher writes none).
            if (outcome.error().code == errc::access_denied && !ctx.who.user_id.empty()) {
                const std::string resource = ctx.bucket + "/" + object.key;
                registry::denial d{.action = "s3.DeleteObjects",
                                   .resource = resource,
                                   .bucket = ctx.bucket,
                                   .key = object.key,
                                   .reason = outcome.error().message};
                co_await audit_denial(ctx, std::move(d));
            }
            auto info = s3::describe(outcome.error());
            s3::delete_error_entry failed;
            failed.key = object.key;
            failed.version_id = object.version_id.value_or("");
            failed.code = std::string(info.code);
            failed.message = std::move(info.message);
            out.errors.push_back(std::move(failed));
        }
    }
    co_return xml_response(s3::delete_result_xml(out));
}

} // namespace depot::server::s3op
