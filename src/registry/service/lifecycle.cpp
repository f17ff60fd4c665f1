#include "registry/service/lifecycle.hpp"

#include "common/log.hpp"
#include "registry/repo/audit.hpp"
#include "registry/repo/lifecycle_repository.hpp"
#include "registry/service/conditional_delete.hpp"
#include "s3/lifecycle.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace depot::registry {

namespace {

/// Who lifecycle actions are done by, in their audit rows.
const audit_context& lifecycle_audit()
{
    static const audit_context ctx{
        .actor = "system", .credential = "lifecycle", .request_id = {}, .client_addr = {}};
    return ctx;
}

/// One pass: the decisions of each Enabled rule, on what the repository selects.
class pass
{
public:
    pass(lifecycle_repository& repo, pg::pool& pool, storage::blob_store& store, multipart_service& multipart,
         time_point now, std::chrono::seconds day)
        : repo_(repo), pool_(pool), store_(store), multipart_(multipart), now_(now), day_(day)
    {}

    asio::awaitable<lifecycle_counts> run()
    {
        // While another process executes the rules, this pass has nothing to do.
        const std::function<asio::awaitable<void>()> body = [this]() -> asio::awaitable<void> {
            co_await each_bucket();
        };
        co_await repo_.exclusively(body);
        co_return counts_;
    }

private:
    asio::awaitable<void> each_bucket()
    {
        const auto buckets = co_await repo_.configured_buckets();
        for (const auto& b : buckets) {
            auto config = s3::parse_lifecycle_configuration(b.configuration);
            if (!config) {
                ++counts_.failed_buckets;
                log::warn("lifecycle configuration unreadable; the bucket is skipped",
                          {{"bucket", b.name}, {"error", config.error().message}});
                continue;
            }
            for (const auto& rule : config->rules)
                if (rule.enabled)
                    co_await apply(b.id, rule);
        }
    }

    /// What `rule` selects when its actions are due for what started `days` ago.
    lifecycle_selection selection(std::int64_t bucket_id, const s3::lifecycle_rule& rule, int days) const
    {
        return {
            .bucket_id = bucket_id, .filter = rule.filter, .cutoff = s3::lifecycle_cutoff(now_, days, day_)};
    }

    asio::awaitable<void> apply(std::int64_t bucket_id, const s3::lifecycle_rule& rule)
    {
        if (rule.expiration_days) {
            const auto due = selection(bucket_id, rule, *rule.expiration_days);
            co_await expire_current(due);
            // S3: an Expiration with Days also removes expired object delete markers once they are that old
            // (a marker has no tags: a tag filter selects none).
            if (rule.filter.tags.empty())
                co_await remove_lone_markers(due);
        } else if (rule.expiration_date || rule.expired_object_delete_marker.value_or(false)) {
            const lifecycle_selection now{.bucket_id = bucket_id, .filter = rule.filter, .cutoff = now_};
            if (rule.expiration_date && *rule.expiration_date <= now_)
                co_await expire_current(now);
            if (rule.expired_object_delete_marker.value_or(false))
                co_await remove_lone_markers(now);
        }
        if (rule.noncurrent_days) {
            const auto due = selection(bucket_id, rule, *rule.noncurrent_days);
            co_await expire_noncurrent(due, rule.newer_noncurrent_versions.value_or(0));
        }
        if (rule.abort_days_after_initiation) {
            const auto due = selection(bucket_id, rule, *rule.abort_days_after_initiation);
            co_await abort_uploads(due);
        }
    }

    /// Aborted as AbortMultipartUpload does.
    asio::awaitable<void> abort_uploads(const lifecycle_selection& s)
    {
        const lifecycle_repository::visitor abort =
            [&](const lifecycle_candidate& u) -> asio::awaitable<void> {
            if (co_await multipart_.abort(lifecycle_audit(), s.bucket_id, u.key, u.version_id))
                ++counts_.aborted_uploads;
        };
        co_await repo_.each_due_upload(s, abort);
    }

    /// Deleted (or hidden behind a delete marker) as DeleteObject does, only if still the version found: a
    /// write since then is newer than the rule allows.
    asio::awaitable<void> expire_current(const lifecycle_selection& s)
    {
        const lifecycle_repository::visitor expire =
            [&](const lifecycle_candidate& v) -> asio::awaitable<void> {
            delete_request req{
                .bucket_id = s.bucket_id, .key = v.key, .version_id = std::nullopt, .owner_id = {}};
            delete_conditions still;
            still.if_match = "\"" + v.etag + "\"";
            still.if_match_last_modified = v.last_modified;
            if (co_await remove_object(lifecycle_audit(), pool_, store_, std::move(req), still))
                ++counts_.expired_current;
        };
        co_await repo_.each_due_current_version(s, expire);
    }

    asio::awaitable<void> remove_lone_markers(const lifecycle_selection& s)
    {
        const lifecycle_repository::visitor remove =
            [&](const lifecycle_candidate& m) -> asio::awaitable<void> {
            delete_request req{
                .bucket_id = s.bucket_id, .key = m.key, .version_id = m.version_id, .owner_id = {}};
            if (co_await remove_object(lifecycle_audit(), pool_, store_, std::move(req), {}))
                ++counts_.removed_delete_markers;
        };
        co_await repo_.each_due_lone_delete_marker(s, remove);
    }

    /// Deleted permanently, by version id.
    asio::awaitable<void> expire_noncurrent(const lifecycle_selection& s, int newer)
    {
        const lifecycle_repository::visitor expire =
            [&](const lifecycle_candidate& v) -> asio::awaitable<void> {
            delete_request req{
                .bucket_id = s.bucket_id, .key = v.key, .version_id = v.version_id, .owner_id = {}};
            auto removed = co_await remove_object(lifecycle_audit(), pool_, store_, std::move(req), {});
            if (removed)
                ++counts_.expired_noncurrent;
            else if (removed.error().code == errc::access_denied)
                ++counts_.kept_locked; // Object Lock: retained or held versions outlive every rule
        };
        co_await repo_.each_due_noncurrent_version(s, newer, expire);
    }

    lifecycle_repository& repo_;
    pg::pool& pool_;
    storage::blob_store& store_;
    multipart_service& multipart_;
    time_point now_;
    std::chrono::seconds day_;
    lifecycle_counts counts_;
};

} // namespace

lifecycle_service::lifecycle_service(pg::pool& pool, storage::blob_store& store, multipart_service& multipart)
    : repo_(std::make_unique<lifecycle_repository>(pool)), pool_(pool), store_(store), multipart_(multipart)
{}

lifecycle_service::~lifecycle_service() = default;

asio::awaitable<std::optional<std::string>> lifecycle_service::configuration(std::int64_t bucket_id)
{
    co_return co_await repo_->configuration(bucket_id);
}

asio::awaitable<result<void>> lifecycle_service::set_configuration(const audit_context& who,
                                                                   std::string_view bucket,
                                                                   std::optional<std::string> xml)
{
    co_return co_await repo_->set_configuration(who, bucket, std::move(xml));
}

asio::awaitable<lifecycle_counts> lifecycle_service::run(time_point now, std::chrono::seconds day)
{
    pass p(*repo_, pool_, store_, multipart_, now, day);
    co_return co_await p.run();
}

} // namespace depot::registry
