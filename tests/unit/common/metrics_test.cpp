#include "common/metrics.hpp"

#include <array>
#include <doctest/doctest.h>
#include <stdexcept>
#include <thread>

using namespace depot;

namespace {
constexpr std::array<std::uint64_t, 3> bounds = {10, 100, 1000};
}

TEST_CASE("a histogram counts an observation into the first bucket whose bound is at least the value")
{
    metrics::histogram h(bounds);
    for (std::uint64_t v : {0, 10, 11, 100, 999, 1000, 1001, 50'000})
        h.observe(v);
    auto c = h.cumulative();
    REQUIRE(c.size() == 4);
    CHECK(c[0] == 2); // 0, 10 (bounds are inclusive, as Prometheus's le)
    CHECK(c[1] == 4); // + 11, 100
    CHECK(c[2] == 6); // + 999, 1000
    CHECK(c[3] == 8); // + 1001, 50000: the +Inf bucket is the total
    CHECK(h.count() == 8);
    CHECK(h.sum() == 0 + 10 + 11 + 100 + 999 + 1000 + 1001 + 50'000);
}

TEST_CASE("counters and histograms stay exact under concurrent updates")
{
    metrics::counter c;
    metrics::histogram h(bounds);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 10'000; ++i) {
                c.inc();
                h.observe(static_cast<std::uint64_t>(i % 2000));
            }
        });
    for (auto& t : threads)
        t.join();
    CHECK(c.value() == 40'000);
    CHECK(h.count() == 40'000);
}

TEST_CASE("a family hands out one child per label set and refuses a wrong number of values")
{
    metrics::registry r;
    auto& f = r.counters("t_requests_total", "Requests.", {"operation", "status_class"});
    auto& a = f.add({"GetObject", "2xx"});
    auto& b = f.add({"GetObject", "4xx"});
    CHECK(&a != &b);
    CHECK(&f.add({"GetObject", "2xx"}) == &a);
    CHECK_THROWS_AS(f.add({"GetObject"}), std::invalid_argument);
    // The same name again is the same family; another type or other labels are a bug.
    CHECK(&r.counters("t_requests_total", "Requests.", {"operation", "status_class"}) == &f);
    CHECK_THROWS_AS(r.gauges("t_requests_total", "Requests.", {"operation", "status_class"}),
                    std::invalid_argument);
    CHECK_THROWS_AS(r.counters("t_requests_total", "Requests.", {"operation"}), std::invalid_argument);
}

TEST_CASE("the registry renders the text exposition format with cumulative buckets, escaping and units")
{
    metrics::registry r;
    auto& requests = r.counters("t_requests_total", "Requests by operation.\nSecond \\ line.", {"operation"});
    requests.add({"Put\"Object\"\n\\"}).inc(3);
    r.gauge_metric("t_in_flight", "In flight.").sub(2);
    auto& latency = r.histograms("t_duration_seconds", "Latency.", {"op"}, metrics::latency_buckets_us(), 1e6)
                        .add({"get"});
    latency.observe(400);       // 0.0004 s: first bucket (0.0005)
    latency.observe(1'000'000); // exactly 1 s: the 1 s bucket
    latency.observe(90'000'000);

    std::string out;
    r.render(out);
    CHECK(out.find("# HELP t_requests_total Requests by operation.\\nSecond \\\\ line.\n"
                   "# TYPE t_requests_total counter\n"
                   "t_requests_total{operation=\"Put\\\"Object\\\"\\n\\\\\"} 3\n") == 0);
    CHECK(out.find("# TYPE t_in_flight gauge\nt_in_flight -2\n") != std::string::npos);
    CHECK(out.find("# TYPE t_duration_seconds histogram\n"
                   "t_duration_seconds_bucket{op=\"get\",le=\"0.0005\"} 1\n"
                   "t_duration_seconds_bucket{op=\"get\",le=\"0.001\"} 1\n") != std::string::npos);
    CHECK(out.find("t_duration_seconds_bucket{op=\"get\",le=\"0.5\"} 1\n"
                   "t_duration_seconds_bucket{op=\"get\",le=\"1\"} 2\n") != std::string::npos);
    CHECK(out.find("t_duration_seconds_bucket{op=\"get\",le=\"60\"} 2\n"
                   "t_duration_seconds_bucket{op=\"get\",le=\"+Inf\"} 3\n"
                   "t_duration_seconds_sum{op=\"get\"} 91.0004\n"
                   "t_duration_seconds_count{op=\"get\"} 3\n") != std::string::npos);
}

TEST_CASE("numbers are written in their shortest exact form")
{
    auto fmt = [](double v) {
        std::string s;
        metrics::text_writer::append_number(s, v);
        return s;
    };
    CHECK(fmt(0) == "0");
    CHECK(fmt(3) == "3");
    CHECK(fmt(0.0025) == "0.0025");
    CHECK(fmt(1e21) == "1e+21");
    CHECK(fmt(1.0 / 0.0) == "+Inf");
    CHECK(fmt(-1.0 / 0.0) == "-Inf");
}
