#pragma once
/// \file
/// Parallel file transfers for `depotctl push` and `pull`: a pool of threads, each with its own keep-alive
/// connection, retries of transient failures, and a progress line on a terminal.

#include "http_client.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace depot::ctl {

/// Counters shared by the workers and the progress printer.
struct progress
{
    std::string what; ///< "pull", "push", "hash"
    std::atomic<std::uint64_t> bytes_total{0};
    std::atomic<std::uint64_t> bytes_done{0};
    std::atomic<std::uint64_t> files_total{0};
    std::atomic<std::uint64_t> files_done{0};
};

/// Runs `work(i, worker)` for i in [0, count) on `threads` threads (`worker` numbers the thread). The first
/// exception stops the others from taking new items and is rethrown. While running, a progress line is drawn
/// on stderr every 200 ms when `show` (a terminal, no --json).
void for_each_parallel(std::size_t count, unsigned threads, progress& p, bool show,
                       const std::function<void(std::size_t item, unsigned worker)>& work);

/// Runs `work(i, connection)` for i in [0, count) on `threads` threads, each with its own connection to
/// `ep`. The first exception stops the others from taking new items and is rethrown. While running, a
/// progress line is drawn on stderr every 200 ms when `show` (a terminal, no --json).
void run_parallel(const endpoint& ep, std::size_t count, unsigned threads, progress& p, bool show,
                  const std::function<void(std::size_t, http_connection&)>& work);

/// Sends `req` and retries network failures and 500/502/503/504 answers (SlowDown) up to 4 times with
/// exponential backoff and jitter; `before_retry` runs before each new attempt (e.g. to reset a hasher).
http_response send_with_retry(http_connection& conn, const http_request& req,
                              const std::function<void()>& before_retry = {});

/// "1.5 GiB", "12 KiB", "900 B".
std::string human_bytes(double bytes);

} // namespace depot::ctl
