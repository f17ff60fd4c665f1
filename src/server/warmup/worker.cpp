#include "server/warmup/worker.hpp"

#include "common/log.hpp"
#include "registry/pg/listener.hpp"
#include "server/services.hpp"
#include "storage/cache/cached_blob_store.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <unistd.h>

namespace depot::server::warmup {
namespace {

std::string host_instance()
{
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0)
        name[0] = '\0';
    return std::string(name) + ":" + std::to_string(::getpid());
}

constexpr auto report_every = std::chrono::milliseconds(500);

/// Reads a segment through the store and drops the bytes (no cache: the warm-up only checks readability).
asio::awaitable<result<void>> read_through(storage::blob_store& store, const registry::warmup_segment& s)
{
    auto reader = co_await store.open(s.store_id, s.offset, s.length);
    if (!reader)
        co_return std::move(reader).error();
    std::vector<std::byte> buf(1 << 20);
    std::uint64_t left = s.length;
    while (left > 0) {
        const std::span<std::byte> window(buf.data(), std::min<std::uint64_t>(buf.size(), left));
        auto n = co_await (*reader)->read_some(window);
        if (!n)
            co_return std::move(n).error();
        if (*n == 0)
            co_return make_error(errc::io_error, "blob is shorter than the manifest says");
        left -= *n;
    }
    co_return ok();
}

} // namespace

/// One job's run on this instance; lives on the strand.
struct worker::run_state
{
    std::int64_t job_id = 0;
    std::vector<registry::warmup_file> files;
    std::size_t next = 0;
    registry::warmup_report report;
    std::size_t running = 0;
    std::optional<asio::steady_timer> done;
};

worker::worker(services& svc, asio::io_context& ioc)
    : svc_(svc), strand_(asio::make_strand(ioc)),
      instance_(svc.opts.instance_id.empty() ? host_instance() : svc.opts.instance_id)
{}

worker::~worker()
{
    stop();
    if (listener_.joinable())
        listener_.join();
}

std::chrono::milliseconds worker::ttl() const
{
    return std::max(std::chrono::milliseconds(3000), 5 * svc_.opts.warmup_poll_interval);
}

void worker::start()
{
    asio::co_spawn(strand_, loop(), [](std::exception_ptr e) {
        if (!e)
            return;
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& ex) {
            log::error("warm-up worker stopped", {{"error", ex.what()}});
        }
    });
    listener_ = std::thread([this] { listen_loop(); });
}

void worker::stop()
{
    if (stopping_.exchange(true))
        return;
    wake();
}

void worker::wake()
{
    asio::post(strand_, [this] {
        ++generation_;
        if (timer_)
            timer_->cancel();
    });
}

void worker::listen_loop()
{
    pg::listen_until(svc_.opts.database_url, "depot_warmups", "depotd-warmups", "warm-up", stopping_,
                     [this] { wake(); });
}

asio::awaitable<void> worker::loop()
{
    asio::steady_timer timer(strand_);
    auto& repo = *svc_.warmups;
    while (!stopping_) {
        const auto generation = generation_;
        bool failed = false;
        try {
            co_await repo.heartbeat(instance_, ttl());
            auto jobs = co_await repo.due(instance_, catch_up_window);
            for (const auto& job : jobs) {
                if (stopping_)
                    break;
                co_await run_job(job);
            }
            co_await repo.sweep();
        } catch (const std::exception& e) {
            log::warn("warm-up: a round failed; will retry", {{"error", e.what()}});
            failed = true;
        }
        if (!failed && generation != generation_ && !stopping_)
            continue;
        if (stopping_)
            break;
        timer.expires_after(svc_.opts.warmup_poll_interval);
        timer_ = &timer;
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        timer_ = nullptr;
    }
    try {
        co_await repo.deregister(instance_);
    } catch (const std::exception& e) {
        log::warn("warm-up: removing the instance row failed", {{"error", e.what()}});
    }
}

asio::awaitable<void> worker::fetch_files(std::shared_ptr<run_state> st)
{
    auto last_report = std::chrono::steady_clock::now();
    while (!stopping_ && st->next < st->files.size()) {
        const auto& f = st->files[st->next++];
        std::optional<error> failure;
        for (const auto& s : f.segments) {
            if (svc_.cache) {
                auto r = co_await svc_.cache->prefetch(s.store_id, s.offset, s.length);
                if (!r)
                    failure = r.error();
            } else {
                auto r = co_await read_through(*svc_.blobs, s);
                if (!r)
                    failure = r.error();
            }
            if (failure)
                break;
        }
        if (failure) {
            ++st->report.errors;
            st->report.last_error = f.path + ": " + failure->message;
            log::warn("warm-up: a file could not be read",
                      {{"job", st->job_id}, {"path", f.path}, {"error", failure->message}});
        } else {
            ++st->report.files_done;
            st->report.bytes_done += static_cast<std::int64_t>(f.size);
        }
        if (std::chrono::steady_clock::now() - last_report >= report_every) {
            last_report = std::chrono::steady_clock::now();
            const registry::warmup_report snapshot = st->report;
            co_await svc_.warmups->report(st->job_id, instance_, snapshot);
            co_await svc_.warmups->heartbeat(instance_, ttl());
        }
    }
}

asio::awaitable<void> worker::run_job(const registry::warmup_job& job)
{
    auto& repo = *svc_.warmups;
    auto st = std::make_shared<run_state>();
    st->job_id = job.id;
    st->files = co_await repo.files(job.version_id);
    std::int64_t bytes_total = 0;
    for (const auto& f : st->files)
        bytes_total += static_cast<std::int64_t>(f.size);
    co_await repo.begin(job.id, instance_, static_cast<std::int64_t>(st->files.size()), bytes_total);
    log::info("warm-up started", {{"job", job.id},
                                  {"team", job.team},
                                  {"model", job.model},
                                  {"version", job.version},
                                  {"files", st->files.size()},
                                  {"bytes", bytes_total}});
    const auto started = std::chrono::steady_clock::now();
    // --warmup-concurrency fetchers share the file list (all on the strand); the last one to end cancels
    // the timer this coroutine waits on.
    st->done.emplace(strand_, std::chrono::steady_clock::time_point::max());
    const std::size_t fetchers =
        std::max<std::size_t>(1, std::min<std::size_t>(svc_.opts.warmup_concurrency, st->files.size()));
    st->running = fetchers;
    for (std::size_t i = 0; i < fetchers; ++i)
        asio::co_spawn(strand_, fetch_files(st), [st](std::exception_ptr e) {
            if (e) {
                try {
                    std::rethrow_exception(e);
                } catch (const std::exception& ex) {
                    ++st->report.errors;
                    st->report.last_error = std::string("warm-up failed: ") + ex.what();
                }
            }
            if (--st->running == 0)
                st->done->cancel();
        });
    boost::system::error_code ec;
    while (st->running > 0)
        co_await st->done->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (stopping_ && st->next < st->files.size())
        co_return; // interrupted: the row stays 'running' and the job runs again after a restart
    st->report.state = st->report.errors > 0 ? "failed" : "completed";
    co_await repo.report(job.id, instance_, st->report);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started)
            .count();
    log::info("warm-up finished", {{"job", job.id},
                                   {"state", st->report.state},
                                   {"files", st->report.files_done},
                                   {"bytes", st->report.bytes_done},
                                   {"errors", st->report.errors},
                                   {"ms", static_cast<std::int64_t>(ms)}});
}

} // namespace depot::server::warmup
