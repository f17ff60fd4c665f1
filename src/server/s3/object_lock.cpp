#include "server/s3/object_lock.hpp"

#include "server/authorization.hpp"
#include "server/s3/common.hpp"
#include "server/s3/versioning.hpp"
#include "server/services.hpp"

#include <chrono>

namespace depot::server::s3op {

result<s3::requested_lock> lock_request_of(const request_context& ctx, const registry::bucket& bucket)
{
    return lock_request_of([&ctx](std::string_view name) { return ctx.get(name); }, bucket);
}

result<s3::requested_lock> lock_request_of(const s3::header_lookup& get, const registry::bucket& bucket)
{
    s3::lock_headers h{.mode = get("x-amz-object-lock-mode"),
                       .retain_until = get("x-amz-object-lock-retain-until-date"),
                       .legal_hold = get("x-amz-object-lock-legal-hold")};
    if (!h.mode && !h.retain_until && !h.legal_hold)
        return s3::requested_lock{};
    if (!bucket.object_lock)
        return make_error(errc::invalid_request, "Bucket is missing Object Lock Configuration");
    return s3::parse_lock_headers(h, std::chrono::system_clock::now());
}

asio::awaitable<result<void>> authorize_requested_lock(request_context& ctx, const registry::bucket& bucket,
                                                       std::string_view key, const s3::requested_lock& lock)
{
    if (lock.retention)
        if (auto allowed = co_await authorize_bucket_access(ctx, auth::permission::write_object_lock, bucket,
                                                            key, "s3:PutObjectRetention", false);
            !allowed)
            co_return allowed;
    if (lock.legal_hold)
        if (auto allowed = co_await authorize_bucket_access(ctx, auth::permission::write_object_lock, bucket,
                                                            key, "s3:PutObjectLegalHold", false);
            !allowed)
            co_return allowed;
    co_return ok();
}

bool bypass_governance_of(const request_context& ctx)
{
    return asks_bypass_governance(ctx);
}

void set_lock_headers(response& res, const registry::object_version& v)
{
    if (v.retention) {
        res.headers.set("x-amz-object-lock-mode", s3::to_string(v.retention->mode));
        res.headers.set("x-amz-object-lock-retain-until-date", format_iso8601(v.retention->retain_until));
    }
    if (v.legal_hold)
        res.headers.set("x-amz-object-lock-legal-hold", *v.legal_hold ? "ON" : "OFF");
}

asio::awaitable<result<lock_target>> lock_target_of(request_context& ctx)
{
    auto version_id = version_id_of(ctx);
    if (!version_id)
        co_return std::move(version_id).error();
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    if (!bucket->object_lock)
        co_return make_error(errc::invalid_request, "Bucket is missing Object Lock Configuration");
    auto opened = co_await ctx.svc->objects.open_version(bucket->id, ctx.key, *version_id);
    if (!opened)
        co_return std::move(opened).error();
    if (opened->version.is_delete_marker) {
        // S3 answers 405 MethodNotAllowed for a delete marker named by id, 404 NoSuchKey for a current one.
        if (version_id->has_value())
            co_return make_error(errc::method_not_allowed,
                                 "The specified method is not allowed against this resource.");
        co_return make_error(errc::no_such_key, "The specified key does not exist.");
    }
    co_return lock_target{.bucket = std::move(*bucket), .version = std::move(opened->version)};
}

} // namespace depot::server::s3op
