#pragma once
/// \file
/// Measurements of one depot-bench run: per operation type the count, errors, bytes, and every latency and
/// time-to-first-byte sample (exact percentiles; a 15 s run of small objects keeps well under a million
/// samples), and the report built from them (human table and JSON).

#include "common/json.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace depot::bench {

/// Latency samples in microseconds. Not thread-safe (depot-bench runs its clients on one thread).
class latency_recorder
{
public:
    void add(std::chrono::nanoseconds d) { samples_.push_back(static_cast<double>(d.count()) / 1000.0); }
    void add_us(double us) { samples_.push_back(us); }
    std::size_t size() const { return samples_.size(); }

    /// The nearest-rank percentile (p in 0..100) of the samples: the smallest sample such that at least p %
    /// of all samples are less than or equal to it; p = 0 gives the minimum. 0 without samples.
    /// Sorts the samples on first use after an add.
    double percentile(double p);
    double mean() const;
    double max();

private:
    std::vector<double> samples_;
    bool sorted_ = false;
    std::size_t sorted_size_ = 0;
    void sort();
};

/// Counters of one operation type (put, get, head, delete, list, multipart).
struct op_stats
{
    std::uint64_t count = 0;  ///< successful operations
    std::uint64_t errors = 0; ///< failed operations (bad status, network error, timeout)
    std::uint64_t bytes = 0;  ///< body bytes sent (writes) or received (reads) by successful operations
    latency_recorder latency;
    latency_recorder ttfb; ///< request start to response header received
};

/// Everything a run measured, and how it was configured (for the report).
struct run_report
{
    std::string workload;
    std::string label;
    std::string endpoint;
    std::uint64_t object_size = 0;
    unsigned concurrency = 0;
    std::string content;
    double elapsed_s = 0; ///< measured phase, first request to last response
    std::map<std::string, op_stats> ops;
    std::uint64_t keys_listed = 0; ///< list only
    std::uint64_t prepared = 0;    ///< keys written before the measured phase
    double prepare_s = 0;
    std::vector<std::string> error_samples; ///< the first few error messages
};

/// The report as JSON: per op count, errors, ops_per_s, mb_per_s, bytes, latency_ms and ttfb_ms with mean,
/// p50, p90, p99, p99.9 (key "p999") and max; plus keys_per_s for list.
boost::json::object to_json(run_report& r);

/// The report as an aligned text table.
std::string to_table(run_report& r);

} // namespace depot::bench
