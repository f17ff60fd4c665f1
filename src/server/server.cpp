#include "server/server.hpp"

#include "common/http_date.hpp"
#include "common/log.hpp"
#include "common/metrics.hpp"
#include "common/secret_box.hpp"
#include "config/blob_store_factory.hpp"
#include "registry/pg/listener.hpp"
#include "registry/pg/migrations.hpp"
#include "registry/service/audit.hpp"
#include "registry/service/audit_archive.hpp"
#include "registry/service/blob_collector.hpp"
#include "registry/service/content.hpp"
#include "registry/service/lifecycle.hpp"
#include "registry/service/warmups.hpp"
#include "registry/service/webhooks.hpp"
#include "server/health.hpp"
#include "server/log_control.hpp"
#include "server/rate_limit.hpp"
#include "server/services.hpp"
#include "server/session.hpp"
#include "server/tls.hpp"
#include "server/warmup/worker.hpp"
#include "server/webhooks/dispatcher.hpp"
#include "storage/cache/cached_blob_store.hpp"
#include "storage/instrumented/instrumented_blob_store.hpp"
#include "storage/localfs/localfs_blob_store.hpp"
#include "storage/memory/memory_blob_store.hpp"
#include "storage/rados/rados_blob_store.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <iterator>
#include <sys/resource.h>
#include <thread>

namespace depot::server {
namespace {

using tcp = asio::ip::tcp;

tcp::endpoint parse_listen(const std::string& listen)
{
    auto colon = listen.rfind(':');
    if (colon == std::string::npos)
        throw std::runtime_error("--listen must be HOST:PORT, got '" + listen + "'");
    std::string host = listen.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    if (host.empty() || host == "*")
        host = "0.0.0.0";
    if (host == "localhost")
        host = "127.0.0.1";
    boost::system::error_code ec;
    auto address = asio::ip::make_address(host, ec);
    if (ec)
        throw std::runtime_error("--listen host must be an IP address, got '" + host + "'");
    int port = 0;
    try {
        port = std::stoi(listen.substr(colon + 1));
    } catch (const std::exception&) {
        port = -1;
    }
    if (port < 0 || port > 65535)
        throw std::runtime_error("--listen port is not a port number: '" + listen + "'");
    return {address, static_cast<unsigned short>(port)};
}

/// Accepts connections until the acceptor closes. Connections beyond --max-connections, or beyond
/// --max-connections-per-address from one client address, are closed at once: that costs nothing (no TLS
/// handshake, no parsing), and S3 clients retry a connection closed before an answer, so the limit sheds
/// load without tying up resources on the refusals. The per-address limit keeps one client from holding
/// every slot. With `tls`, every new connection takes the context current at its accept and keeps it.
asio::awaitable<void> accept_loop(tcp::acceptor& acceptor, services& svc, connection_registry& registry,
                                  const tls_context_store* tls)
{
    auto& ioc = static_cast<asio::io_context&>(acceptor.get_executor().context());
    asio::steady_timer backoff(ioc);
    std::chrono::steady_clock::time_point last_refusal_log{};
    std::chrono::steady_clock::time_point last_per_address_log{};
    std::uint64_t refused = 0;
    auto& refusals = metrics::default_registry().counters(
        "depot_connections_refused_total",
        "Connections closed right after their accept, by reason: max_connections (--max-connections "
        "reached), per_address (--max-connections-per-address reached by the client's address).",
        {"reason"});
    auto& refused_total = refusals.add({"max_connections"});
    auto& refused_per_address = refusals.add({"per_address"});
    for (;;) {
        boost::system::error_code ec;
        tcp::socket socket(asio::make_strand(ioc));
        co_await acceptor.async_accept(socket, asio::redirect_error(asio::use_awaitable, ec));
        if (ec) {
            if (!acceptor.is_open() || ec == asio::error::operation_aborted)
                co_return;
            log::warn("accept failed", {{"error", ec.message()}});
            // Out of descriptors or memory: the connection stays queued, so retrying at once would spin.
            backoff.expires_after(std::chrono::milliseconds(100));
            co_await backoff.async_wait(asio::redirect_error(asio::use_awaitable, ec));
            continue;
        }
        const auto peer = socket.remote_endpoint(ec);
        const std::string address = ec ? std::string() : address_key(peer.address().to_string());
        if (!registry.try_open(svc.opts.max_connections)) {
            socket.close(ec);
            refused_total.inc();
            ++refused;
            auto now = std::chrono::steady_clock::now();
            if (now - last_refusal_log >= std::chrono::seconds(10)) {
                log::warn("connection limit reached; closing new connections",
                          {{"max_connections", svc.opts.max_connections}, {"refused", refused}});
                last_refusal_log = now;
                refused = 0;
            }
            continue;
        }
        if (!svc.connections_per_address.try_add(address, svc.opts.max_connections_per_address)) {
            registry.closed();
            socket.close(ec);
            refused_per_address.inc();
            auto now = std::chrono::steady_clock::now();
            if (now - last_per_address_log >= std::chrono::seconds(10)) {
                log::warn("connection limit per address reached; closing its new connections",
                          {{"address", address},
                           {"max_connections_per_address", svc.opts.max_connections_per_address}});
                last_per_address_log = now;
            }
            continue;
        }
        socket.set_option(tcp::no_delay(true), ec);
        auto ex = socket.get_executor();
        auto done = [&registry, &svc, address](std::exception_ptr e) {
            svc.connections_per_address.remove(address);
            registry.closed();
            if (!e)
                return;
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& ex) {
                log::error("connection failed", {{"error", ex.what()}});
            }
        };
        beast::tcp_stream stream(std::move(socket));
        if (tls)
            asio::co_spawn(ex, run_tls_session(std::move(stream), tls->current(), svc, registry), done);
        else
            asio::co_spawn(ex, run_session(std::move(stream), svc, registry), done);
    }
}

/// Raises the soft limit on open descriptors to the hard limit (every connection is one), and warns when
/// even that leaves too little room for --max-connections.
/// The SSE master key from --sse-master-key-file: 64 hex characters. Unlike the server key it is never
/// created: an installation turns SSE-S3 on by provisioning it (and must keep it: objects sealed under it
/// cannot be read without it). Throws when the file cannot be read or holds no valid key.
std::string load_sse_master_key(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        throw std::runtime_error("--sse-master-key-file: cannot read " + path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto key = secret_box::parse_server_key(text);
    if (!key)
        throw std::runtime_error("--sse-master-key-file " + path + ": expected 64 hex characters");
    return std::move(*key);
}

void raise_descriptor_limit(std::size_t max_connections)
{
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) != 0)
        return;
    if (lim.rlim_cur < lim.rlim_max) {
        lim.rlim_cur = lim.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &lim);
        ::getrlimit(RLIMIT_NOFILE, &lim);
    }
    // Headroom for the database pool, blob files, the listener and logs.
    constexpr rlim_t reserve = 256;
    if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < max_connections + reserve)
        log::warn("open-file limit below --max-connections; connections beyond it fail to accept",
                  {{"open_file_limit", static_cast<std::uint64_t>(lim.rlim_cur)},
                   {"max_connections", max_connections}});
}

/// Aborts multipart uploads older than the configured age and reclaims blob-store space no metadata can
/// reach (writes a crash cut short, blobs whose publishing transaction never committed). Safe with several
/// depotd processes: each upload is aborted under its row lock, and removing a blob twice is harmless.
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

/// Links committed audit rows into the hash chain (registry::seal_audit) every --audit-seal-interval after
/// this process appended rows, and every 50 intervals regardless (rows of depotctl or of a process that
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

/// The LISTEN half of the lookup cache (registry/service/lookup_cache.hpp): a thread of its own that feeds
/// the cache the notices of schema 0012's triggers and tells it whether it is listening. Off without a TTL.
class lookup_cache_listener
{
public:
    explicit lookup_cache_listener(services& svc) : svc_(svc) {}
    ~lookup_cache_listener()
    {
        stop();
        if (thread_.joinable())
            thread_.join();
    }

    void start()
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
    void stop() { stopping_ = true; }

private:
    services& svc_;
    std::atomic<bool> stopping_{false};
    std::thread thread_;
};

} // namespace

void run(const config::options& opts)
{
    log::level lvl = log::level::info;
    log::parse_level(opts.log_level, lvl);
    log::set_level(lvl);

    // TLS files first: a bad certificate or key is the operator's mistake to report before anything else.
    std::unique_ptr<tls_context_store> tls;
    if (!opts.tls_cert_file.empty()) {
        tls = std::make_unique<tls_context_store>(opts.tls_cert_file, opts.tls_key_file);
        auto info = tls->info();
        log::info("TLS certificate loaded", {{"file", opts.tls_cert_file},
                                             {"subject", info.subject},
                                             {"serial", info.serial},
                                             {"not_after", info.not_after}});
    }
    raise_descriptor_limit(opts.max_connections);

    unsigned threads = opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
    asio::io_context ioc(static_cast<int>(threads));

    std::string server_key;
    if (!opts.server_key_hex.empty()) {
        auto k = secret_box::parse_server_key(opts.server_key_hex);
        if (!k)
            throw std::runtime_error("DEPOT_SERVER_KEY: " + k.error().message);
        server_key = std::move(*k);
    } else {
        server_key = secret_box::load_or_create_server_key(opts.server_key_file);
    }

    auto pool = pg::make_pool(ioc.get_executor(),
                              {.conninfo = opts.database_url, .max_connections = opts.db_connections});
    // The cache sits above the instrumented store, so depot_blob_* metrics count only real backend calls.
    std::shared_ptr<storage::blob_store> store =
        storage::make_instrumented_blob_store(config::make_blob_store(opts));
    std::shared_ptr<storage::cached_blob_store> cache;
    if (opts.cache_memory_bytes > 0 || opts.cache_disk_bytes > 0) {
        cache = storage::make_cached_blob_store(store, {.memory_bytes = opts.cache_memory_bytes,
                                                        .disk_dir = opts.cache_dir,
                                                        .disk_bytes = opts.cache_disk_bytes});
        store = cache;
    } else {
        storage::register_cache_metrics();
    }
    register_readiness_metrics();
    auto webhook_repo = std::make_shared<registry::webhook_service>(*pool, server_key);
    services svc(opts, pool, store, std::move(server_key));
    if (!opts.sse_master_key_hex.empty() || !opts.sse_master_key_file.empty()) {
        std::string sse_key;
        if (!opts.sse_master_key_hex.empty()) {
            auto k = secret_box::parse_server_key(opts.sse_master_key_hex);
            if (!k)
                throw std::runtime_error("DEPOT_SSE_MASTER_KEY: expected 64 hex characters");
            sse_key = std::move(*k);
        } else {
            sse_key = load_sse_master_key(opts.sse_master_key_file);
        }
        svc.objects.set_sse_master_key(sse_key);
        svc.multipart.set_sse_master_key(std::move(sse_key));
    }
    svc.webhooks = webhook_repo;
    svc.cache = cache;
    svc.warmups = std::make_shared<registry::warmup_service>(*pool);
    webhooks::dispatcher dispatcher(svc, ioc);
    warmup::worker warmup_worker(svc, ioc);
    lookup_cache_listener lookup_listener(svc);
    connection_registry registry;
    tcp::acceptor acceptor(ioc);
    asio::signal_set signals(ioc, SIGINT, SIGTERM);
    asio::signal_set reload_signal(ioc, SIGHUP);
    log_level_signals level_signals(ioc, lvl);
    asio::steady_timer drain_timer(ioc);
    asio::steady_timer cleanup_timer(ioc);
    asio::steady_timer seal_timer(ioc);
    asio::steady_timer intent_timer(ioc);
    std::exception_ptr startup_failure;

    auto startup = [&]() -> asio::awaitable<void> {
        {
            auto conn = co_await pool->acquire();
            if (opts.migrate) {
                auto status = co_await pg::migrate(*conn);
                log::info("database schema ready", {{"version", status.current}});
            } else {
                auto status = co_await pg::migration_state(*conn);
                if (status.current != status.latest)
                    throw std::runtime_error("database schema is at version " +
                                             std::to_string(status.current) + ", this depotd needs " +
                                             std::to_string(status.latest) +
                                             ": run `depotctl migrate` or start with --migrate true");
            }
        }
        // Before any delivery: secrets sealed before schema 0014 are bound to their rows (and keep working).
        const std::size_t rebound = co_await webhook_repo->bind_legacy_secrets();
        if (rebound)
            log::info("webhook secrets re-sealed bound to their subscriptions", {{"subscriptions", rebound}});
        lookup_listener.start(); // after the migrations: the notices come from schema 0012's triggers
        auto endpoint = parse_listen(opts.listen);
        acceptor.open(endpoint.protocol());
        acceptor.set_option(tcp::acceptor::reuse_address(true));
        acceptor.bind(endpoint);
        acceptor.listen(asio::socket_base::max_listen_connections);
        auto bound = acceptor.local_endpoint();
        log::info("listening", {{"address", bound.address().to_string() + ":" + std::to_string(bound.port())},
                                {"storage", std::string(store->kind())},
                                {"tls", tls != nullptr},
                                {"threads", threads}});
        asio::co_spawn(ioc, cleanup_loop(svc, cleanup_timer, registry), asio::detached);
        asio::co_spawn(ioc, seal_loop(svc, seal_timer, registry), asio::detached);
        asio::co_spawn(ioc, intent_loop(svc, intent_timer), asio::detached);
        dispatcher.start();
        warmup_worker.start();
        co_await accept_loop(acceptor, svc, registry, tls.get());
    };
    asio::co_spawn(ioc, startup(), [&](std::exception_ptr e) {
        if (e && !startup_failure && !registry.stopping()) {
            startup_failure = e;
            ioc.stop();
        }
    });

    // SIGHUP reloads the TLS certificate and key for new connections; a failed reload keeps the current
    // ones. (Without TLS there is nothing to reload, and SIGHUP must not end the process either.)
    std::function<void()> wait_for_reload = [&] {
        reload_signal.async_wait([&](boost::system::error_code ec, int) {
            if (ec)
                return;
            if (!tls) {
                log::info("SIGHUP: nothing to reload (TLS is off)");
            } else if (auto info = tls->reload()) {
                log::info("TLS certificate reloaded", {{"file", tls->cert_file()},
                                                       {"subject", info->subject},
                                                       {"serial", info->serial},
                                                       {"not_after", info->not_after}});
            } else {
                log::error("TLS reload failed; new connections keep the previous certificate",
                           {{"error", info.error().message}});
            }
            wait_for_reload();
        });
    };
    wait_for_reload();

    signals.async_wait([&](boost::system::error_code ec, int sig) {
        if (ec)
            return;
        reload_signal.cancel();
        log::info("shutting down", {{"signal", sig}, {"connections", registry.size()}});
        boost::system::error_code ignored;
        acceptor.close(ignored);
        cleanup_timer.cancel();
        seal_timer.cancel();
        registry.begin_shutdown();
        dispatcher.stop();
        warmup_worker.stop();
        lookup_listener.stop();
        // Wait until every connection has finished its request, or the grace period is over.
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                auto deadline = std::chrono::steady_clock::now() + opts.shutdown_grace;
                while (registry.size() != 0 && std::chrono::steady_clock::now() < deadline) {
                    drain_timer.expires_after(std::chrono::milliseconds(50));
                    co_await drain_timer.async_wait(asio::use_awaitable);
                }
                if (registry.size() != 0) {
                    log::warn("grace period over; closing busy connections",
                              {{"connections", registry.size()}});
                    registry.close_all();
                    for (int i = 0; i < 100 && registry.size() != 0; ++i) {
                        drain_timer.expires_after(std::chrono::milliseconds(50));
                        co_await drain_timer.async_wait(asio::use_awaitable);
                    }
                }
                intent_timer.cancel();
                // With the acceptor and every connection closed, run() returns once the last handler is
                // done, so every coroutine unwinds normally before the services are destroyed.
                if (registry.size() != 0) {
                    log::error("connections did not close; exiting without cleanup");
                    std::_Exit(1);
                }
            },
            asio::detached);
    });

    std::vector<std::thread> workers;
    for (unsigned i = 1; i < threads; ++i)
        workers.emplace_back([&] { ioc.run(); });
    ioc.run();
    for (auto& t : workers)
        t.join();
    if (startup_failure)
        std::rethrow_exception(startup_failure);
    log::info("stopped");
}

} // namespace depot::server
