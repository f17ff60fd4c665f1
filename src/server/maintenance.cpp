// depotd's maintenance loops (server/maintenance.hpp), moved out of server.cpp (issue 23) unchanged: the
// same timers, metrics and log lines.
#include "server/maintenance.hpp"

#include "common/http_date.hpp"
#include "common/log.hpp"
#include "common/metrics.hpp"
#include "registry/pg/listener.hpp"
#include "registry/service/audit.hpp"
#include "registry/service/audit_archive.hpp"
#include "registry/service/blob_collector.hpp"
#include "registry/service/content.hpp"
#include "registry/service/lifecycle.hpp"
#include "server/session.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <exception>

namespace depot::server {
namespace {

/// What the cleanup loop has done in this process, for dashboards: passes by result, what each pass
/// reclaimed, and when the last good pass ended (an alert can fire when it stops moving).
struct cleanup_metrics
{
    metrics::counter& passes_ok;
    metrics::counter& passes_failed;
    metrics::counter& aborted_uploads;
    metrics::counter& incomplete_blobs;
    metrics::counter& unreferenced_blobs;
    metrics::counter& unreferenced_bytes;
    metrics::counter& scanned_blobs;
    metrics::counter& lifecycle_expired_current;
    metrics::counter& lifecycle_expired_noncurrent;
    metrics::counter& lifecycle_removed_delete_markers;
    metrics::counter& lifecycle_aborted_uploads;
    metrics::gauge& last_success;
    metrics::histogram& duration;

    static cleanup_metrics make(metrics::registry& reg)
    {
        auto& passes =
            reg.counters("depot_gc_passes_total", "Garbage-collection passes, by result.", {"result"});
        auto& blobs = reg.counters("depot_gc_collected_blobs_total",
                                   "Blobs removed by garbage collection, by kind (leftovers of uncommitted "
                                   "writes, committed blobs no metadata references).",
                                   {"kind"});
        auto& lifecycle =
            reg.counters("depot_lifecycle_actions_total",
                         "What bucket lifecycle rules removed, by action (expire_current: current "
                         "versions deleted or hidden behind a delete marker; expire_noncurrent; "
                         "remove_delete_marker; abort_upload).",
                         {"action"});
        return cleanup_metrics{
            .passes_ok = passes.add({"ok"}),
            .passes_failed = passes.add({"error"}),
            .aborted_uploads = reg.counter_metric("depot_gc_aborted_uploads_total",
                                                  "Multipart uploads aborted for exceeding the maximum age."),
            .incomplete_blobs = blobs.add({"incomplete"}),
            .unreferenced_blobs = blobs.add({"unreferenced"}),
            .unreferenced_bytes = reg.counter_metric("depot_gc_collected_bytes_total",
                                                     "Bytes of unreferenced committed blobs removed."),
            .scanned_blobs = reg.counter_metric("depot_gc_scanned_blobs_total",
                                                "Committed blobs listed by garbage-collection passes."),
            .lifecycle_expired_current = lifecycle.add({"expire_current"}),
            .lifecycle_expired_noncurrent = lifecycle.add({"expire_noncurrent"}),
            .lifecycle_removed_delete_markers = lifecycle.add({"remove_delete_marker"}),
            .lifecycle_aborted_uploads = lifecycle.add({"abort_upload"}),
            .last_success =
                reg.gauge_metric("depot_gc_last_success_timestamp_seconds",
                                 "End of the last successful garbage-collection pass (Unix time)."),
            .duration =
                reg.histograms("depot_gc_pass_duration_seconds", "Duration of garbage-collection passes.", {},
                               metrics::latency_buckets_us(), 1e6)
                    .add({}),
        };
    }
};

/// What audit retention has done in this process: passes by result ("busy" when another depotd held the
/// archive lock) and the rows it moved into the archive bucket.
struct audit_retention_metrics
{
    metrics::counter& passes_ok;
    metrics::counter& passes_busy;
    metrics::counter& passes_failed;
    metrics::counter& archived_rows;

    static audit_retention_metrics make(metrics::registry& reg)
    {
        auto& passes = reg.counters("depot_audit_archive_passes_total",
                                    "Audit retention passes (--audit-retention), by result.", {"result"});
        return audit_retention_metrics{
            .passes_ok = passes.add({"ok"}),
            .passes_busy = passes.add({"busy"}),
            .passes_failed = passes.add({"error"}),
            .archived_rows = reg.counter_metric("depot_audit_archived_rows_total",
                                                "Audit rows moved into the archive bucket and out of the "
                                                "database by audit retention."),
        };
    }
};

/// Audit rows taken per pass at most, so that one archive object stays a reasonable size after retention is
/// first switched on for a long log; the rest follow on the next passes.
constexpr std::int64_t audit_rows_per_pass = 100000;

/// Moves the audit rows older than --audit-retention into --audit-archive-bucket
/// (registry/service/audit_archive.hpp). A missing bucket is not a startup error (an installation creates its
/// buckets through S3 once depotd runs): like every other failure (the chain does not verify, the store
/// refuses the write) it is logged, leaves every row in place, and the next pass tries again.
asio::awaitable<void> archive_old_audit_rows(services& svc, audit_retention_metrics& m)
{
    try {
        registry::audit_archive_request req;
        req.before = format_iso8601(std::chrono::system_clock::now() - svc.opts.audit_retention);
        req.bucket = svc.opts.audit_archive_bucket;
        req.max_rows = audit_rows_per_pass;
        auto done =
            co_await registry::archive_audit_rows(registry::system_audit_context(), *svc.db, *svc.blobs, req);
        if (!done) {
            m.passes_failed.inc();
            log::warn("audit archive failed; the rows stay and the next cleanup retries",
                      {{"bucket", req.bucket}, {"error", done.error().message}});
            co_return;
        }
        if (done->busy) {
            m.passes_busy.inc();
            co_return;
        }
        m.passes_ok.inc();
        m.archived_rows.inc(static_cast<std::uint64_t>(done->archived));
        if (done->archived)
            log::info("audit rows archived", {{"rows", done->archived},
                                              {"first_row", done->first_row},
                                              {"last_row", done->last_row},
                                              {"object", "s3://" + done->bucket + "/" + done->key}});
    } catch (const std::exception& e) {
        m.passes_failed.inc();
        log::warn("audit archive failed; the rows stay and the next cleanup retries", {{"error", e.what()}});
    }
}

/// Deletes the console sessions that have ended (expired or signed out): they never work again. A failure is
/// logged and the next pass retries.
asio::awaitable<void> purge_ended_sessions(services& svc, metrics::counter& purged)
{
    try {
        auto n = co_await svc.credentials.purge_ended_sessions(std::chrono::system_clock::now());
        purged.inc(static_cast<std::uint64_t>(n));
        if (n)
            log::info("ended console sessions deleted", {{"sessions", n}});
    } catch (const std::exception& e) {
        log::warn("deleting ended console sessions failed; will retry", {{"error", e.what()}});
    }
}

} // namespace

asio::awaitable<void> cleanup_loop(services& svc, asio::steady_timer& timer,
                                   const connection_registry& registry)
{
    static cleanup_metrics m = cleanup_metrics::make(metrics::default_registry());
    static audit_retention_metrics audit_metrics = audit_retention_metrics::make(metrics::default_registry());
    static metrics::counter& sessions_purged = metrics::default_registry().counter_metric(
        "depot_console_sessions_purged_total", "Expired or signed-out console sessions deleted by cleanup.");
    while (!registry.stopping()) {
        timer.expires_after(svc.opts.cleanup_interval);
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (ec)
            co_return;
        const auto started = std::chrono::steady_clock::now();
        try {
            const auto now = std::chrono::system_clock::now();
            auto aborted = co_await svc.multipart.abort_initiated_before(registry::system_audit_context(),
                                                                         now - svc.opts.multipart_max_age);
            m.aborted_uploads.inc(aborted);
            // Bucket lifecycle rules, before the collector: the blobs they release go in the same pass.
            const auto lc = co_await svc.lifecycle.run(now, svc.opts.lifecycle_day);
            m.lifecycle_expired_current.inc(lc.expired_current);
            m.lifecycle_expired_noncurrent.inc(lc.expired_noncurrent);
            m.lifecycle_removed_delete_markers.inc(lc.removed_delete_markers);
            m.lifecycle_aborted_uploads.inc(lc.aborted_uploads);
            auto collected =
                co_await registry::collect_unreachable_blobs(*svc.db, *svc.blobs, now - svc.opts.blob_grace);
            m.incomplete_blobs.inc(collected.incomplete);
            m.unreferenced_blobs.inc(collected.orphans);
            m.unreferenced_bytes.inc(collected.orphan_bytes);
            m.scanned_blobs.inc(collected.scanned);
            m.passes_ok.inc();
            m.last_success.set(std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
            m.duration.observe(metrics::micros_since(started));
            const auto lifecycle_actions =
                lc.expired_current + lc.expired_noncurrent + lc.removed_delete_markers + lc.aborted_uploads;
            if (aborted || collected.incomplete || collected.orphans || lifecycle_actions || lc.kept_locked)
                log::info("cleanup", {{"aborted_uploads", aborted},
                                      {"lifecycle_actions", lifecycle_actions},
                                      {"lifecycle_kept_locked", lc.kept_locked},
                                      {"incomplete_blobs", collected.incomplete},
                                      {"unreferenced_blobs", collected.orphans},
                                      {"blobs_scanned", collected.scanned}});
        } catch (const std::exception& e) {
            m.passes_failed.inc();
            m.duration.observe(metrics::micros_since(started));
            log::warn("cleanup failed; will retry", {{"error", e.what()}});
        }
        co_await purge_ended_sessions(svc, sessions_purged);
        if (svc.opts.audit_retention.count() > 0)
            co_await archive_old_audit_rows(svc, audit_metrics);
    }
}

/// Renews the lease of this process's intents (registry/service/content.hpp) every intent_renewal, until the
/// timer is cancelled: after the last connection closed, since uploads still draining need their intents.
asio::awaitable<void> intent_loop(services& svc, asio::steady_timer& timer)
{
    for (;;) {
        timer.expires_after(registry::intent_renewal);
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (ec)
            co_return;
        try {
            co_await registry::renew_intents(*svc.db);
        } catch (const std::exception& e) {
            log::warn("renewing the lease of uploads in flight failed; will retry", {{"error", e.what()}});
        }
    }
}

/// Links committed audit rows into the hash chain (registry::audit_log::seal) every --audit-seal-interval
/// after this process appended rows, and every 50 intervals regardless (rows of depotctl or of a process that
/// stopped before sealing its own).
asio::awaitable<void> seal_loop(services& svc, asio::steady_timer& timer, const connection_registry& registry)
{
    static metrics::counter& sealed = metrics::default_registry().counter_metric(
        "depot_audit_sealed_rows_total", "Audit rows linked into the hash chain by this process");
    static metrics::counter& failed = metrics::default_registry().counter_metric(
        "depot_audit_seal_failures_total", "Sealing rounds that failed (retried on the next round)");
    for (unsigned round = 1; !registry.stopping(); ++round) {
        timer.expires_after(svc.opts.audit_seal_interval);
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (ec)
            co_return;
        if (!registry::audit_log::take_appended() && round % 50 != 0)
            continue;
        try {
            sealed.inc(static_cast<std::uint64_t>(co_await registry::audit_log::seal(*svc.db)));
        } catch (const std::exception& e) {
            failed.inc();
            log::warn("sealing the audit log failed; will retry", {{"error", e.what()}});
        }
    }
}

lookup_cache_listener::~lookup_cache_listener()
{
    stop();
    if (thread_.joinable())
        thread_.join();
}

void lookup_cache_listener::start()
{
    if (svc_.opts.lookup_cache_ttl.count() == 0)
        return;
    thread_ = std::thread([this] {
        auto& cache = svc_.lookups;
        pg::listen_until(svc_.opts.database_url, "depot_cache", "depotd-cache", "lookup cache", stopping_,
                         {.connected = [&cache] { cache.listening(); },
                          .notified =
                              [&cache](const std::vector<std::string>& payloads) {
                                  for (const auto& p : payloads)
                                      cache.notified(p);
                              },
                          .disconnected = [&cache] { cache.not_listening(); }});
        cache.not_listening();
    });
}

} // namespace depot::server
