#include "server/metrics_endpoint.hpp"

#include "common/hash.hpp"
#include "common/log.hpp"
#include "common/metrics.hpp"
#include "common/strings.hpp"
#include "registry/service/webhooks.hpp"
#include "server/services.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <sys/resource.h>
#include <unistd.h>

#ifndef DEPOT_VERSION
#define DEPOT_VERSION "0.1.0"
#endif

namespace depot::server {

namespace asio = boost::asio;
namespace {

/// Logical bytes (current object versions) and physical bytes (stored blobs), from PostgreSQL. Both are
/// full scans, so one value is shared by every scrape for `interval`.
class storage_totals
{
public:
    struct values
    {
        bool known = false;
        std::int64_t logical = 0;
        std::int64_t physical = 0;
    };

    asio::awaitable<values> get(services& svc)
    {
        const auto now = std::chrono::steady_clock::now();
        {
            std::lock_guard lock(mutex_);
            if (refreshing_ || (cached_.known && now - fetched_ < interval()))
                co_return cached_;
            refreshing_ = true;
        }
        // Cleared however this ends, also when the scrape's coroutine is destroyed mid-query.
        struct refresh_done
        {
            storage_totals& self;
            ~refresh_done()
            {
                std::lock_guard lock(self.mutex_);
                self.refreshing_ = false;
            }
        } done{*this};
        values fresh;
        try {
            const auto totals = co_await svc.buckets.totals();
            fresh = {.known = true, .logical = totals.logical, .physical = totals.physical};
        } catch (const std::exception& e) {
            log::debug("metrics: storage totals query failed", {{"error", e.what()}});
        }
        std::lock_guard lock(mutex_);
        if (fresh.known) {
            cached_ = fresh;
            fetched_ = now;
        }
        co_return cached_;
    }

private:
    static std::chrono::seconds interval()
    {
        static const std::chrono::seconds s = [] {
            const char* v = std::getenv("DEPOT_METRICS_STORAGE_INTERVAL");
            char* end = nullptr;
            long n = v ? std::strtol(v, &end, 10) : -1;
            return std::chrono::seconds(v && *v && end && *end == '\0' && n >= 0 ? n : 60);
        }();
        return s;
    }

    std::mutex mutex_;
    values cached_;
    std::chrono::steady_clock::time_point fetched_;
    bool refreshing_ = false;
};

storage_totals& totals()
{
    static auto* t = new storage_totals();
    return *t;
}

} // namespace

void append_process_metrics(std::string& out)
{
    metrics::text_writer w(out);
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    const double page = static_cast<double>(sysconf(_SC_PAGESIZE));

    std::ifstream stat_file("/proc/self/stat");
    std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
    // Fields after the command name, which is in parentheses and may contain spaces: state is field 3.
    auto close = stat.rfind(')');
    if (close != std::string::npos) {
        std::istringstream fields(stat.substr(close + 2));
        std::vector<std::string> f;
        for (std::string x; fields >> x;)
            f.push_back(x);
        // f[0] is field 3; utime 14, stime 15, starttime 22, vsize 23, rss 24.
        if (f.size() > 21) {
            const double cpu = (std::stod(f[11]) + std::stod(f[12])) / ticks;
            w.family("process_cpu_seconds_total", "User and system CPU time spent, in seconds.", "counter");
            w.sample("process_cpu_seconds_total", {}, cpu);
            w.family("process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge");
            w.sample("process_virtual_memory_bytes", {}, std::stod(f[20]));
            w.family("process_resident_memory_bytes", "Resident memory size in bytes.", "gauge");
            w.sample("process_resident_memory_bytes", {}, std::stod(f[21]) * page);

            std::ifstream system_stat("/proc/stat");
            for (std::string line; std::getline(system_stat, line);) {
                if (line.rfind("btime ", 0) == 0) {
                    const double boot = std::stod(line.substr(6));
                    w.family("process_start_time_seconds",
                             "Start time of the process since the Unix epoch, in seconds.", "gauge");
                    w.sample("process_start_time_seconds", {}, boot + std::stod(f[19]) / ticks);
                    break;
                }
            }
        }
    }

    if (DIR* d = opendir("/proc/self/fd")) {
        std::size_t n = 0;
        while (const dirent* e = readdir(d))
            if (e->d_name[0] != '.')
                ++n;
        closedir(d);
        w.family("process_open_fds", "Number of open file descriptors.", "gauge");
        w.sample("process_open_fds", {}, static_cast<double>(n > 0 ? n - 1 : 0)); // minus the one reading
    }
    rlimit lim{};
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0) {
        w.family("process_max_fds", "Maximum number of open file descriptors.", "gauge");
        w.sample("process_max_fds", {}, static_cast<double>(lim.rlim_cur));
    }
}

std::string checked_metrics_token(std::string_view text, std::string_view source)
{
    const auto first = text.find_first_not_of(" \t\r\n");
    const auto last = text.find_last_not_of(" \t\r\n");
    const std::string token(first == std::string_view::npos ? std::string_view()
                                                            : text.substr(first, last - first + 1));
    const bool printable = std::all_of(token.begin(), token.end(), [](char c) {
        return static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7f;
    });
    if (token.size() < 16 || !printable)
        throw std::runtime_error(std::string(source) +
                                 ": expected a token of at least 16 printable characters without spaces");
    return token;
}

std::string load_metrics_token(const config::options& opts)
{
    if (!opts.metrics_token.empty())
        return checked_metrics_token(opts.metrics_token, "DEPOT_METRICS_TOKEN");
    if (opts.metrics_token_file.empty())
        return {};
    std::ifstream in(opts.metrics_token_file);
    if (!in)
        throw std::runtime_error("--metrics-token-file: cannot read " + opts.metrics_token_file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return checked_metrics_token(text, "--metrics-token-file " + opts.metrics_token_file);
}

bool metrics_authorized(std::string_view token, std::optional<std::string_view> authorization) noexcept
{
    if (token.empty())
        return true;
    if (!authorization)
        return false;
    constexpr std::string_view scheme = "Bearer ";
    std::string_view v = *authorization;
    if (v.size() < scheme.size() || !iequals_ascii(v.substr(0, scheme.size()), scheme))
        return false;
    v.remove_prefix(scheme.size());
    while (!v.empty() && v.front() == ' ')
        v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t'))
        v.remove_suffix(1);
    return constant_time_equal(v, token);
}

asio::awaitable<response> metrics_response(services& svc)
{
    std::string out;
    out.reserve(64 * 1024);
    metrics::default_registry().render(out);

    metrics::text_writer w(out);
    const auto pool = svc.db->stats();
    w.family("depot_db_pool_connections", "PostgreSQL connections of this process's pool, by state.",
             "gauge");
    w.sample("depot_db_pool_connections", {{"state", "in_use"}}, static_cast<double>(pool.open - pool.idle));
    w.sample("depot_db_pool_connections", {{"state", "idle"}}, static_cast<double>(pool.idle));
    w.family("depot_db_pool_waiters", "Requests waiting for a PostgreSQL connection.", "gauge");
    w.sample("depot_db_pool_waiters", {}, static_cast<double>(pool.waiting));
    w.family("depot_db_pool_max_connections", "Size limit of the PostgreSQL pool.", "gauge");
    w.sample("depot_db_pool_max_connections", {}, static_cast<double>(svc.opts.db_connections));

    auto stored = co_await totals().get(svc);
    if (stored.known) {
        w.family("depot_stored_logical_bytes", "Bytes of all current objects, as clients see them.", "gauge");
        w.sample("depot_stored_logical_bytes", {}, static_cast<double>(stored.logical));
        w.family("depot_stored_physical_bytes", "Bytes of all stored blobs, each identical content once.",
                 "gauge");
        w.sample("depot_stored_physical_bytes", {}, static_cast<double>(stored.physical));
        w.family("depot_dedup_ratio", "Logical bytes per physical byte (1 when nothing is stored).", "gauge");
        w.sample("depot_dedup_ratio", {},
                 stored.physical > 0
                     ? static_cast<double>(stored.logical) / static_cast<double>(stored.physical)
                     : 1.0);
    }

    // The webhook queue: deliveries not yet delivered or given up, and how long the oldest has waited.
    // Both read the partial index of pending deliveries, so a scrape stays cheap with a long history.
    try {
        const auto queue = svc.webhooks ? co_await svc.webhooks->queue() : registry::webhook_queue_state{};
        w.family("depot_webhook_queue_depth",
                 "Webhook deliveries waiting to be delivered (or being delivered).", "gauge");
        w.sample("depot_webhook_queue_depth", {}, static_cast<double>(queue.depth));
        w.family("depot_webhook_queue_oldest_seconds", "Age of the oldest undelivered webhook delivery.",
                 "gauge");
        w.sample("depot_webhook_queue_oldest_seconds", {}, queue.oldest_seconds);
    } catch (const std::exception& e) {
        log::debug("metrics: webhook queue query failed", {{"error", e.what()}});
    }

    try {
        append_process_metrics(out);
    } catch (const std::exception& e) {
        log::debug("metrics: cannot read /proc/self", {{"error", e.what()}});
    }
    w.family("depot_build_info", "Always 1; labels name the version and the blob store.", "gauge");
    w.sample("depot_build_info", {{"version", DEPOT_VERSION}, {"storage", svc.blobs->kind()}}, 1);

    response res;
    res.headers.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
    res.headers.set(http::field::cache_control, "no-store");
    res.body = std::move(out);
    co_return res;
}

} // namespace depot::server
