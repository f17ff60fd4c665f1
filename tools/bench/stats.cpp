#include "stats.hpp"

#include "options.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace depot::bench {

void latency_recorder::sort()
{
    if (!sorted_ || sorted_size_ != samples_.size()) {
        std::sort(samples_.begin(), samples_.end());
        sorted_ = true;
        sorted_size_ = samples_.size();
    }
}

double latency_recorder::percentile(double p)
{
    if (samples_.empty())
        return 0;
    sort();
    p = std::clamp(p, 0.0, 100.0);
    // Nearest rank: ceil(p/100 * n), 1-based; rank 0 (p = 0) is the minimum. The small epsilon keeps
    // p * n that is an exact integer in decimal (99.9 % of 1000) from rounding up in binary.
    auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(samples_.size()) - 1e-9));
    if (rank == 0)
        rank = 1;
    return samples_[std::min(rank, samples_.size()) - 1];
}

double latency_recorder::mean() const
{
    if (samples_.empty())
        return 0;
    return std::accumulate(samples_.begin(), samples_.end(), 0.0) / static_cast<double>(samples_.size());
}

double latency_recorder::max()
{
    if (samples_.empty())
        return 0;
    sort();
    return samples_.back();
}

namespace {

double round3(double v)
{
    return std::round(v * 1000.0) / 1000.0;
}

boost::json::object distribution_ms(latency_recorder& r)
{
    return boost::json::object{
        {"mean", round3(r.mean() / 1000)},           {"p50", round3(r.percentile(50) / 1000)},
        {"p90", round3(r.percentile(90) / 1000)},    {"p99", round3(r.percentile(99) / 1000)},
        {"p999", round3(r.percentile(99.9) / 1000)}, {"max", round3(r.max() / 1000)}};
}

double per_second(double amount, double seconds)
{
    return seconds > 0 ? amount / seconds : 0;
}

std::string fmt(const char* format, double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

} // namespace

boost::json::object to_json(run_report& r)
{
    boost::json::object ops;
    for (auto& [name, s] : r.ops) {
        ops[name] = boost::json::object{
            {"count", s.count},
            {"errors", s.errors},
            {"bytes", s.bytes},
            {"ops_per_s", round3(per_second(static_cast<double>(s.count), r.elapsed_s))},
            {"mb_per_s", round3(per_second(static_cast<double>(s.bytes) / 1e6, r.elapsed_s))},
            {"latency_ms", distribution_ms(s.latency)},
            {"ttfb_ms", distribution_ms(s.ttfb)}};
    }
    boost::json::array error_samples;
    for (const auto& e : r.error_samples)
        error_samples.push_back(json_string(e));
    boost::json::object j = {{"workload", r.workload},
                             {"label", r.label},
                             {"endpoint", r.endpoint},
                             {"object_size", r.object_size},
                             {"concurrency", r.concurrency},
                             {"content", r.content},
                             {"elapsed_s", round3(r.elapsed_s)},
                             {"prepared", r.prepared},
                             {"prepare_s", round3(r.prepare_s)},
                             {"ops", ops},
                             {"error_samples", std::move(error_samples)}};
    if (r.workload == "list") {
        j["keys_listed"] = r.keys_listed;
        j["keys_per_s"] = round3(per_second(static_cast<double>(r.keys_listed), r.elapsed_s));
    }
    return j;
}

std::string to_table(run_report& r)
{
    std::string out;
    out += "workload " + r.workload;
    if (!r.label.empty())
        out += " on " + r.label;
    out += " (" + r.endpoint + "): size " + format_size(r.object_size) + ", concurrency " +
           std::to_string(r.concurrency) + ", " + r.content + " content, " + fmt("%.2f", r.elapsed_s) + " s";
    if (r.prepared != 0)
        out += ", " + std::to_string(r.prepared) + " keys prepared in " + fmt("%.1f", r.prepare_s) + " s";
    out += '\n';
    char line[256];
    std::snprintf(line, sizeof line, "%-10s %9s %7s %10s %9s %9s %9s %9s %9s %9s %9s\n", "op", "ops",
                  "errors", "ops/s", "MB/s", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "ttfb p50",
                  "ttfb p99");
    out += line;
    for (auto& [name, s] : r.ops) {
        std::snprintf(
            line, sizeof line, "%-10s %9llu %7llu %10.1f %9.1f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f\n",
            name.c_str(), static_cast<unsigned long long>(s.count), static_cast<unsigned long long>(s.errors),
            per_second(static_cast<double>(s.count), r.elapsed_s),
            per_second(static_cast<double>(s.bytes) / 1e6, r.elapsed_s), s.latency.percentile(50) / 1000,
            s.latency.percentile(90) / 1000, s.latency.percentile(99) / 1000,
            s.latency.percentile(99.9) / 1000, s.ttfb.percentile(50) / 1000, s.ttfb.percentile(99) / 1000);
        out += line;
    }
    if (r.workload == "list")
        out += "keys listed " + std::to_string(r.keys_listed) + ", " +
               fmt("%.0f", per_second(static_cast<double>(r.keys_listed), r.elapsed_s)) + " keys/s\n";
    for (const auto& e : r.error_samples)
        out += "error: " + e + '\n';
    return out;
}

} // namespace depot::bench
