#include "registry/lifecycle.hpp"

#include "common/log.hpp"
#include "registry/audit.hpp"
#include "registry/conditional_delete.hpp"
#include "registry/sql_util.hpp"
#include "registry/transaction.hpp"
#include "s3/lifecycle.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <limits>

namespace depot::registry {

namespace {

/// Who lifecycle actions are done by, in their audit rows.
const audit_context& lifecycle_audit()
{
    static const audit_context ctx{
        .actor = "system", .credential = "lifecycle", .request_id = {}, .client_addr = {}};
    return ctx;
}

/// The installation-wide lifecycle lock ("depotlcy"), held with pg_try_advisory_xact_lock for a pass: with
/// several depotd processes one executes the rules at a time, so no removal is attempted (and audited) twice.
constexpr std::int64_t lifecycle_lock_key = 0x6465706f746c6379;

/// Rows one query takes; a pass continues after the last one until nothing is left.
constexpr std::int64_t batch = 500;

std::int64_t millis(time_point t)
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

/// The size bounds of a filter as SQL arguments: size > $gt AND size < $lt.
std::int64_t greater_than(const s3::lifecycle_filter& f)
{
    return f.size_greater_than ? static_cast<std::int64_t>(*f.size_greater_than) : -1;
}

std::int64_t less_than(const s3::lifecycle_filter& f)
{
    return f.size_less_than ? static_cast<std::int64_t>(*f.size_less_than)
                            : std::numeric_limits<std::int64_t>::max();
}

struct bucket_config
{
    std::int64_t id = 0;
    std::string name;
    std::string xml;
};

class pass
{
public:
    pass(pg::pool& pool, storage::blob_store& store, multipart_service& multipart, time_point now,
         std::chrono::seconds day)
        : pool_(pool), store_(store), multipart_(multipart), now_(now), day_(day)
    {}

    asio::awaitable<lifecycle_counts> run()
    {
        // The lock lives in this connection's transaction: released at its COMMIT, or when the pool rolls
        // back a connection given back mid-transaction (an exception below).
        auto lock = co_await pool_.acquire();
        co_await lock->execute("BEGIN");
        auto held = co_await sql(*lock, "SELECT pg_try_advisory_xact_lock($1)", lifecycle_lock_key);
        if (!held[0].boolean(0)) {
            co_await lock->execute("ROLLBACK");
            co_return counts_; // another process is executing the rules right now
        }
        co_await each_bucket();
        co_await lock->execute("COMMIT");
        co_return counts_;
    }

private:
    asio::awaitable<void> each_bucket()
    {
        std::vector<bucket_config> buckets;
        {
            auto conn = co_await pool_.acquire();
            auto rs =
                co_await sql(*conn, "SELECT id, name, lifecycle FROM buckets WHERE lifecycle IS NOT NULL "
                                    "ORDER BY id");
            for (auto r : rs)
                buckets.push_back({r.i64(0), r.str(1), r.str(2)});
        }
        for (const auto& b : buckets) {
            auto config = s3::parse_lifecycle_configuration(b.xml);
            if (!config) {
                ++counts_.failed_buckets;
                log::warn("lifecycle configuration unreadable; the bucket is skipped",
                          {{"bucket", b.name}, {"error", config.error().message}});
                continue;
            }
            for (const auto& rule : config->rules)
                if (rule.enabled)
                    co_await apply(b, rule);
        }
    }

    asio::awaitable<void> apply(const bucket_config& b, const s3::lifecycle_rule& rule)
    {
        if (rule.expiration_days)
            co_await expire_current(b, rule.filter, s3::lifecycle_cutoff(now_, *rule.expiration_days, day_));
        else if (rule.expiration_date && *rule.expiration_date <= now_)
            co_await expire_current(b, rule.filter, now_);
        // S3: an Expiration with Days also removes expired object delete markers once they are that old.
        if (rule.expiration_days)
            co_await remove_lone_markers(b, rule.filter,
                                         s3::lifecycle_cutoff(now_, *rule.expiration_days, day_));
        else if (rule.expired_object_delete_marker.value_or(false))
            co_await remove_lone_markers(b, rule.filter, now_);
        if (rule.noncurrent_days)
            co_await expire_noncurrent(b, rule.filter,
                                       s3::lifecycle_cutoff(now_, *rule.noncurrent_days, day_),
                                       rule.newer_noncurrent_versions.value_or(0));
        if (rule.abort_days_after_initiation)
            co_await abort_uploads(b, rule.filter,
                                   s3::lifecycle_cutoff(now_, *rule.abort_days_after_initiation, day_));
    }

    /// Multipart uploads of keys under the filter's prefix initiated at or before `cutoff`, aborted as
    /// AbortMultipartUpload does.
    asio::awaitable<void> abort_uploads(const bucket_config& b, const s3::lifecycle_filter& f,
                                        time_point cutoff)
    {
        std::int64_t after = 0;
        for (;;) {
            pg::result_set rs;
            {
                auto conn = co_await pool_.acquire();
                rs = co_await sql(*conn,
                                  "SELECT id, key, upload_id FROM multipart_uploads WHERE bucket_id = $1 "
                                  "AND starts_with(key, $2) AND id > $3 "
                                  "AND initiated_at <= to_timestamp($4::double precision / 1000) "
                                  "ORDER BY id LIMIT $5",
                                  b.id, f.prefix, after, millis(cutoff), batch);
            }
            for (auto r : rs) {
                after = r.i64(0);
                if (co_await multipart_.abort(lifecycle_audit(), b.id, r.str(1), r.str(2)))
                    ++counts_.aborted_uploads;
            }
            if (static_cast<std::int64_t>(rs.size()) < batch)
                co_return;
        }
    }

    /// Current versions (not delete markers) last modified at or before `cutoff`.
    asio::awaitable<void> expire_current(const bucket_config& b, const s3::lifecycle_filter& f,
                                         time_point cutoff)
    {
        std::string after;
        for (;;) {
            pg::result_set rs;
            {
                auto conn = co_await pool_.acquire();
                rs = co_await sql(
                    *conn,
                    "SELECT key, etag, " DEPOT_MS(
                        "last_modified") " FROM object_versions WHERE bucket_id = $1 "
                                         "AND superseded_seq IS NULL AND NOT is_delete_marker "
                                         "AND NOT purged AND starts_with(key, $2) AND key > $3 "
                                         "AND last_modified <= to_timestamp($4::double precision "
                                         "/ 1000) AND size > $5 AND size < $6 ORDER BY key LIMIT $7",
                    b.id, f.prefix, after, millis(cutoff), greater_than(f), less_than(f), batch);
            }
            for (auto r : rs) {
                after = r.str(0);
                delete_request req{
                    .bucket_id = b.id, .key = after, .version_id = std::nullopt, .owner_id = {}};
                // Only the version found: a write since then is newer than the rule allows.
                delete_conditions still;
                still.if_match = "\"" + r.str(1) + "\"";
                still.if_match_last_modified = from_millis(r.i64(2));
                auto done = co_await remove_object(lifecycle_audit(), pool_, store_, std::move(req), still);
                if (done)
                    ++counts_.expired_current;
            }
            if (static_cast<std::int64_t>(rs.size()) < batch)
                co_return;
        }
    }

    /// Delete markers that are their key's only version, written at or before `cutoff`.
    asio::awaitable<void> remove_lone_markers(const bucket_config& b, const s3::lifecycle_filter& f,
                                              time_point cutoff)
    {
        std::string after;
        for (;;) {
            pg::result_set rs;
            {
                auto conn = co_await pool_.acquire();
                rs = co_await sql(
                    *conn,
                    "SELECT o.key, o.version_id FROM object_versions o WHERE o.bucket_id = $1 "
                    "AND o.superseded_seq IS NULL AND o.is_delete_marker AND NOT o.purged "
                    "AND starts_with(o.key, $2) AND o.key > $3 "
                    "AND o.last_modified <= to_timestamp($4::double precision / 1000) "
                    "AND NOT EXISTS (SELECT 1 FROM object_versions p WHERE p.bucket_id = o.bucket_id "
                    "AND p.key = o.key AND p.id <> o.id AND NOT p.purged) ORDER BY o.key LIMIT $5",
                    b.id, f.prefix, after, millis(cutoff), batch);
            }
            for (auto r : rs) {
                after = r.str(0);
                delete_request req{.bucket_id = b.id, .key = after, .version_id = r.str(1), .owner_id = {}};
                if (co_await remove_object(lifecycle_audit(), pool_, store_, std::move(req), {}))
                    ++counts_.removed_delete_markers;
            }
            if (static_cast<std::int64_t>(rs.size()) < batch)
                co_return;
        }
    }

    /// Noncurrent versions (delete markers included) whose successor was written at or before `cutoff`,
    /// beyond the `newer` newest noncurrent versions of their key.
    asio::awaitable<void> expire_noncurrent(const bucket_config& b, const s3::lifecycle_filter& f,
                                            time_point cutoff, int newer)
    {
        std::string after_key;
        std::int64_t after_id = 0;
        for (;;) {
            pg::result_set rs;
            {
                auto conn = co_await pool_.acquire();
                rs = co_await sql(
                    *conn,
                    "SELECT key, id, version_id FROM ("
                    "SELECT o.key, o.id, o.version_id, o.size, o.superseded_seq, "
                    "row_number() OVER w AS position, lag(o.last_modified) OVER w AS noncurrent_since "
                    "FROM object_versions o WHERE o.bucket_id = $1 AND NOT o.purged "
                    "AND starts_with(o.key, $2) AND o.key >= $3 "
                    "WINDOW w AS (PARTITION BY o.key ORDER BY o.created_seq DESC)) v "
                    "WHERE superseded_seq IS NOT NULL AND position > 1 + $4 "
                    "AND noncurrent_since <= to_timestamp($5::double precision / 1000) "
                    "AND size > $6 AND size < $7 AND (key > $3 OR id > $8) ORDER BY key, id LIMIT $9",
                    b.id, f.prefix, after_key, static_cast<std::int64_t>(newer), millis(cutoff),
                    greater_than(f), less_than(f), after_id, batch);
            }
            for (auto r : rs) {
                after_key = r.str(0);
                after_id = r.i64(1);
                delete_request req{
                    .bucket_id = b.id, .key = after_key, .version_id = r.str(2), .owner_id = {}};
                if (co_await remove_object(lifecycle_audit(), pool_, store_, std::move(req), {}))
                    ++counts_.expired_noncurrent;
            }
            if (static_cast<std::int64_t>(rs.size()) < batch)
                co_return;
        }
    }

    pg::pool& pool_;
    storage::blob_store& store_;
    multipart_service& multipart_;
    time_point now_;
    std::chrono::seconds day_;
    lifecycle_counts counts_;
};

} // namespace

asio::awaitable<std::optional<std::string>> lifecycle_service::configuration(std::int64_t bucket_id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn, "SELECT lifecycle FROM buckets WHERE id = $1 AND lifecycle IS NOT NULL",
                           bucket_id);
    if (rs.empty())
        co_return std::nullopt;
    co_return rs[0].str(0);
}

asio::awaitable<result<void>> lifecycle_service::set_configuration(const audit_context& who,
                                                                   std::string_view bucket,
                                                                   std::optional<std::string> xml)
{
    co_return co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
        auto rs =
            co_await sql(c, "UPDATE buckets SET lifecycle = $2 WHERE name = $1 RETURNING id", bucket, xml);
        if (rs.empty())
            co_return make_error(errc::no_such_bucket, "The specified bucket does not exist");
        co_await append_audit(c, who, "bucket.update", bucket, "",
                              std::string("{\"lifecycle\":") + (xml ? "true" : "false") + "}");
        co_return ok();
    });
}

asio::awaitable<lifecycle_counts> lifecycle_service::run(time_point now, std::chrono::seconds day)
{
    pass p(pool_, store_, multipart_, now, day);
    co_return co_await p.run();
}

} // namespace depot::registry
