#include "transfer.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <random>
#include <thread>

namespace depot::ctl {

std::string human_bytes(double bytes)
{
    static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
    return buf;
}

namespace {

void draw(const progress& p, std::chrono::steady_clock::time_point start, bool final)
{
    const double done = static_cast<double>(p.bytes_done.load());
    const double total = static_cast<double>(p.bytes_total.load());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double fraction = total > 0 ? std::min(1.0, done / total) : (final ? 1.0 : 0.0);
    constexpr int width = 28;
    const int filled = static_cast<int>(fraction * width);
    std::string bar(static_cast<std::size_t>(filled), '=');
    if (filled < width)
        bar += '>' + std::string(static_cast<std::size_t>(width - filled - 1), ' ');
    std::fprintf(stderr, "\r%-5s [%s] %3.0f%%  %s / %s  %s/s  %llu/%llu files   %s", p.what.c_str(),
                 bar.c_str(), fraction * 100, human_bytes(done).c_str(), human_bytes(total).c_str(),
                 human_bytes(seconds > 0 ? done / seconds : 0).c_str(),
                 static_cast<unsigned long long>(p.files_done.load()),
                 static_cast<unsigned long long>(p.files_total.load()), final ? "\n" : "");
    std::fflush(stderr);
}

} // namespace

void for_each_parallel(std::size_t count, unsigned threads, progress& p, bool show,
                       const std::function<void(std::size_t item, unsigned worker)>& work)
{
    if (count == 0)
        return;
    threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(count)));
    std::atomic<std::size_t> next{0};
    std::atomic<bool> stop{false};
    std::exception_ptr first_error;
    std::mutex m;
    std::condition_variable finished;
    unsigned running = threads;

    auto worker = [&](unsigned self) {
        try {
            while (!stop.load()) {
                auto i = next.fetch_add(1);
                if (i >= count)
                    break;
                work(i, self);
            }
        } catch (...) {
            std::lock_guard lock(m);
            if (!first_error)
                first_error = std::current_exception();
            stop = true;
        }
        std::lock_guard lock(m);
        if (--running == 0)
            finished.notify_all();
    };
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back(worker, t);

    const auto start = std::chrono::steady_clock::now();
    {
        std::unique_lock lock(m);
        while (running > 0) {
            finished.wait_for(lock, std::chrono::milliseconds(200));
            if (show && running > 0)
                draw(p, start, false);
        }
    }
    for (auto& t : pool)
        t.join();
    if (show)
        draw(p, start, true);
    if (first_error)
        std::rethrow_exception(first_error);
}

void run_parallel(const endpoint& ep, std::size_t count, unsigned threads, progress& p, bool show,
                  const std::function<void(std::size_t, http_connection&)>& work)
{
    // One keep-alive connection per thread, opened with the thread's first item.
    std::vector<std::unique_ptr<http_connection>> connections(std::min<std::size_t>(threads, count));
    for_each_parallel(count, threads, p, show, [&](std::size_t i, unsigned worker) {
        auto& conn = connections[worker];
        if (!conn)
            conn = std::make_unique<http_connection>(ep);
        work(i, *conn);
    });
}

http_response send_with_retry(http_connection& conn, const http_request& req,
                              const std::function<void()>& before_retry)
{
    thread_local std::mt19937 rng{std::random_device{}()};
    constexpr int attempts = 5;
    for (int attempt = 1;; ++attempt) {
        try {
            auto resp = conn.send(req);
            const bool transient =
                resp.status == 500 || resp.status == 502 || resp.status == 503 || resp.status == 504;
            if (!transient || attempt == attempts)
                return resp;
        } catch (const transport_error&) {
            if (attempt == attempts)
                throw;
        }
        // 100 ms, 200 ms, 400 ms, 800 ms, each with up to 100 % jitter.
        const auto base = std::chrono::milliseconds(100 << (attempt - 1));
        std::uniform_int_distribution<long> jitter(0, base.count());
        std::this_thread::sleep_for(base + std::chrono::milliseconds(jitter(rng)));
        if (before_retry)
            before_retry();
    }
}

} // namespace depot::ctl
