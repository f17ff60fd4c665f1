#pragma once
/// \file
/// The warm-up worker of one depotd: preloads model versions into this instance's read cache
/// (storage/cache) as warm-up jobs (registry/service/warmups.hpp) ask.
///
/// - Liveness: the worker renews this instance's row in depot_instances every poll (and while it warms), so
///   jobs know which instances to wait for; a clean shutdown removes the row.
/// - Wake-up: a thread LISTENs on `depot_warmups` on a plain libpq connection (as the webhook dispatcher
///   does) and wakes the worker on every NOTIFY and after every reconnect; the worker also polls every
///   --warmup-poll-interval. Each round it runs the jobs of the last hour this instance has not finished
///   (so a restarted instance, whose cache is empty, warms again what was asked recently), then completes
///   jobs whose instances all finished or died.
/// - A job: the version's files are read segment by segment through the cache (cached_blob_store::prefetch;
///   without a cache they are only read), --warmup-concurrency files at once; progress is recorded about
///   twice a second and at the end, where the last awaited instance completes the job and its event
///   (warmup.completed / warmup.failed) commits with that.

#include "registry/service/warmups.hpp"

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <string>
#include <thread>

namespace depot::server {
struct services;
}

namespace depot::server::warmup {

namespace asio = boost::asio;

/// How far back a (re)started instance looks for jobs to run.
inline constexpr std::chrono::seconds catch_up_window{3600};

class worker
{
public:
    /// `svc.warmups` must be set. Nothing runs until start().
    worker(services& svc, asio::io_context& ioc);
    ~worker();
    worker(const worker&) = delete;
    worker& operator=(const worker&) = delete;

    void start();
    /// Stops between files; the listener thread ends within a fraction of a second (joined by the
    /// destructor). The instance's liveness row is removed when the loop ends.
    void stop();
    /// Thread-safe: makes the worker look for jobs now.
    void wake();

    const std::string& instance() const noexcept { return instance_; }

private:
    struct run_state;

    asio::awaitable<void> loop();
    asio::awaitable<void> run_job(const registry::warmup_job& job);
    asio::awaitable<void> fetch_files(std::shared_ptr<run_state> st);
    void listen_loop();
    std::chrono::milliseconds ttl() const;

    services& svc_;
    asio::strand<asio::io_context::executor_type> strand_;
    std::string instance_;
    std::atomic<bool> stopping_{false};
    std::uint64_t generation_ = 0;        ///< on the strand: bumped by every wake
    asio::steady_timer* timer_ = nullptr; ///< on the strand: set while idle
    std::thread listener_;
};

} // namespace depot::server::warmup
