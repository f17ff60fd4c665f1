#include "options.hpp"
#include "s3_util.hpp"
#include "stats.hpp"

#include <doctest/doctest.h>

using namespace depot::bench;

TEST_CASE("sizes parse with binary, decimal and bare units")
{
    CHECK(parse_size("4096") == 4096u);
    CHECK(parse_size("0") == 0u);
    CHECK(parse_size("4KiB") == 4096u);
    CHECK(parse_size("4kib") == 4096u);
    CHECK(parse_size("4K") == 4096u);
    CHECK(parse_size("4KB") == 4000u);
    CHECK(parse_size("64MiB") == 64u << 20);
    CHECK(parse_size("64MB") == 64'000'000u);
    CHECK(parse_size("1GiB") == 1u << 30);
    CHECK(parse_size("2 GiB") == 2ull << 30);
    CHECK(parse_size("1TiB") == 1ull << 40);
    CHECK(parse_size("12B") == 12u);
}

TEST_CASE("malformed or oversized sizes are rejected")
{
    CHECK_FALSE(parse_size(""));
    CHECK_FALSE(parse_size("KiB"));
    CHECK_FALSE(parse_size("1.5MiB"));
    CHECK_FALSE(parse_size("-4KiB"));
    CHECK_FALSE(parse_size("4XiB"));
    CHECK_FALSE(parse_size("4 KiB extra"));
    CHECK_FALSE(parse_size("2048TiB"));
    CHECK_FALSE(parse_size("99999999999999999999"));
}

TEST_CASE("sizes format with the largest exact binary unit")
{
    CHECK(format_size(4096) == "4 KiB");
    CHECK(format_size(64u << 20) == "64 MiB");
    CHECK(format_size(1u << 30) == "1 GiB");
    CHECK(format_size(1000) == "1000 B");
    CHECK(format_size(0) == "0 B");
}

TEST_CASE("durations parse in ms, s, m and h and reject zero and junk")
{
    CHECK(parse_duration("500ms") == std::chrono::milliseconds(500));
    CHECK(parse_duration("15s") == std::chrono::milliseconds(15000));
    CHECK(parse_duration("15") == std::chrono::milliseconds(15000));
    CHECK(parse_duration("2m") == std::chrono::milliseconds(120000));
    CHECK(parse_duration("1h") == std::chrono::milliseconds(3600000));
    CHECK_FALSE(parse_duration("0s"));
    CHECK_FALSE(parse_duration("1d"));
    CHECK_FALSE(parse_duration("s"));
    CHECK_FALSE(parse_duration("1.5s"));
}

TEST_CASE("percentiles use the nearest rank")
{
    latency_recorder r;
    CHECK(r.percentile(50) == 0);
    for (int i = 100; i >= 1; --i) // out of order on purpose
        r.add_us(i);
    CHECK(r.percentile(0) == 1);
    CHECK(r.percentile(50) == 50);
    CHECK(r.percentile(90) == 90);
    CHECK(r.percentile(99) == 99);
    CHECK(r.percentile(99.9) == 100);
    CHECK(r.percentile(100) == 100);
    CHECK(r.max() == 100);
    CHECK(r.mean() == doctest::Approx(50.5));
}

TEST_CASE("p99.9 of 1000 samples is the 999th, not the maximum")
{
    latency_recorder r;
    for (int i = 1; i <= 1000; ++i)
        r.add_us(i);
    CHECK(r.percentile(99.9) == 999);
    CHECK(r.percentile(99) == 990);
    r.add_us(5000); // adding after a query sorts again
    CHECK(r.max() == 5000);
}

TEST_CASE("a single sample is every percentile")
{
    latency_recorder r;
    r.add(std::chrono::microseconds(1500));
    CHECK(r.percentile(50) == doctest::Approx(1500));
    CHECK(r.percentile(99.9) == doctest::Approx(1500));
}

TEST_CASE("the JSON report carries rates and percentiles in milliseconds")
{
    run_report r;
    r.workload = "get";
    r.elapsed_s = 2.0;
    auto& s = r.ops["get"];
    s.count = 4;
    s.bytes = 8'000'000;
    for (int ms : {1, 2, 3, 4}) {
        s.latency.add(std::chrono::milliseconds(ms));
        s.ttfb.add(std::chrono::milliseconds(ms));
    }
    const boost::json::value j = to_json(r);
    const auto& get = j.at("ops").at("get");
    CHECK(get.at("ops_per_s").as_double() == 2.0);
    CHECK(get.at("mb_per_s").as_double() == 4.0);
    CHECK(get.at("latency_ms").at("p50").as_double() == 2.0);
    CHECK(get.at("latency_ms").at("p99").as_double() == 4.0);
    CHECK(get.at("ttfb_ms").at("max").as_double() == 4.0);
    CHECK(to_table(r).find("get") != std::string::npos);
}

TEST_CASE("mix weights parse and reject unknown operations")
{
    auto m = parse_mix("get=60,put=30,delete=10");
    REQUIRE(m);
    CHECK(m->get == 60);
    CHECK(m->put == 30);
    CHECK(m->head == 0);
    CHECK(m->del == 10);
    CHECK_FALSE(parse_mix("get=0"));
    CHECK_FALSE(parse_mix("copy=5"));
    CHECK_FALSE(parse_mix("get=x"));
    CHECK_FALSE(parse_mix("get"));
}

TEST_CASE("options need a workload, credentials and an http endpoint")
{
    bool help = false;
    auto o =
        parse_options({"get", "--endpoint", "http://127.0.0.1:7480", "--access-key", "A", "--secret-key=S",
                       "--size", "64MiB", "--concurrency", "4", "--range-size", "1MiB"},
                      help);
    CHECK(o.kind == workload::get);
    CHECK(o.host == "127.0.0.1");
    CHECK(o.port == "7480");
    CHECK(o.size == 64u << 20);
    CHECK(o.concurrency == 4);
    CHECK(o.range_size == 1u << 20);
    CHECK_THROWS_AS(parse_options({"--access-key", "A", "--secret-key", "S"}, help), std::invalid_argument);
    CHECK_THROWS_AS(parse_options({"fly", "--access-key", "A", "--secret-key", "S"}, help),
                    std::invalid_argument);
    CHECK_THROWS_AS(
        parse_options({"put", "--endpoint", "https://x:1", "--access-key", "A", "--secret-key", "S"}, help),
        std::invalid_argument);
    CHECK_THROWS_AS(parse_options({"put", "--size", "huge", "--access-key", "A", "--secret-key", "S"}, help),
                    std::invalid_argument);
    CHECK_THROWS_AS(
        parse_options({"put", "--concurrency", "0", "--access-key", "A", "--secret-key", "S"}, help),
        std::invalid_argument);
    parse_options({"--help"}, help);
    CHECK(help);
}

TEST_CASE("random contents differ per object and per block; fixed contents are identical")
{
    content_generator random(content_kind::random, 7);
    std::vector<char> a(200000), b(200000), a_again(200000);
    random.fill(1, 0, a);
    random.fill(2, 0, b);
    random.fill(1, 0, a_again);
    CHECK(a != b);
    CHECK(a == a_again);
    // A fill at an offset yields the same bytes as the whole object at that offset (stamps included).
    std::vector<char> tail(100000);
    random.fill(1, 65530, tail);
    CHECK(std::equal(tail.begin(), tail.end(), a.begin() + 65530));

    content_generator fixed(content_kind::fixed, 7);
    fixed.fill(1, 0, a);
    fixed.fill(2, 0, b);
    CHECK(a == b);
}

TEST_CASE("XML values are found and unescaped; keys are counted")
{
    std::string xml =
        "<R><IsTruncated>true</IsTruncated><Contents><Key>a&amp;b</Key></Contents>"
        "<Contents><Key>c</Key></Contents><NextContinuationToken>x&lt;y</NextContinuationToken></R>";
    CHECK(xml_value(xml, "IsTruncated") == "true");
    CHECK(xml_value(xml, "Key") == "a&b");
    CHECK(xml_value(xml, "NextContinuationToken") == "x<y");
    CHECK(xml_value(xml, "UploadId") == "");
    CHECK(xml_count(xml, "Key") == 2);
    CHECK(object_key("p", 42) == "p/o0000000042");
}
