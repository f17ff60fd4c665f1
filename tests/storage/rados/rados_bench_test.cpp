/// \file
/// Single-client throughput of the RADOS store, for comparison with `rados bench` on the same cluster. Not a
/// test (nothing is asserted about speed): opt in with DEPOT_TEST_CEPH_BENCH=1, preferably in a Release
/// build, and read the MESSAGE lines.
#include "rados_test_env.hpp"
#include "storage/test_util.hpp"

#include <chrono>
#include <cstdlib>
#include <doctest/doctest.h>

using namespace depot;
using namespace depot::storage;
using namespace depot::storage::testing;

namespace {

bool bench_enabled()
{
    const char* v = std::getenv("DEPOT_TEST_CEPH_BENCH");
    return ceph_configured() && v && std::string(v) == "1";
}

constexpr std::size_t mib = 1024 * 1024;

/// Writes `count` blobs of `size` bytes in 1 MiB write() calls, like a streamed PUT; returns their ids.
asio::awaitable<std::vector<blob_id>> put_many(blob_store& store, const std::string& chunk, std::size_t size,
                                               int count)
{
    std::vector<blob_id> ids;
    for (int i = 0; i < count; ++i) {
        auto created = co_await store.create({.size_hint = size});
        REQUIRE(created.has_value());
        for (std::size_t at = 0; at < size; at += chunk.size())
            REQUIRE((co_await (*created)->write(bytes_of(chunk))).has_value());
        REQUIRE((co_await (*created)->commit()).has_value());
        ids.push_back((*created)->id());
    }
    co_return ids;
}

/// Reads every blob whole into a 1 MiB buffer, like a streamed GET; returns the bytes read.
asio::awaitable<std::size_t> get_many(blob_store& store, const std::vector<blob_id>& ids)
{
    std::vector<std::byte> buf(mib);
    std::size_t total = 0;
    for (const auto& id : ids) {
        auto opened = co_await store.open(id, 0, UINT64_MAX);
        REQUIRE(opened.has_value());
        for (;;) {
            auto n = co_await (*opened)->read_some(buf);
            REQUIRE(n.has_value());
            if (*n == 0)
                break;
            total += *n;
        }
    }
    co_return total;
}

double mib_per_s(std::size_t bytes, std::chrono::steady_clock::duration d)
{
    return static_cast<double>(bytes) / mib / std::chrono::duration<double>(d).count();
}

} // namespace

TEST_CASE("RADOS store single-client PUT and GET throughput" * doctest::skip(!bench_enabled()))
{
    const std::string chunk = make_content(mib, 99);
    struct shape
    {
        std::size_t size;
        int count;
        unsigned window;
    };
    for (auto [size, count, window] :
         {shape{4 * mib, 32, 8}, shape{64 * mib, 4, 8}, shape{64 * mib, 4, 1}, shape{64 * mib, 4, 16}}) {
        auto options = ceph_test_options();
        REQUIRE(options);
        options->window = window;
        auto store = make_test_rados_store(*options);
        auto started = std::chrono::steady_clock::now();
        auto ids = run(put_many(*store, chunk, size, count));
        auto put_time = std::chrono::steady_clock::now() - started;
        started = std::chrono::steady_clock::now();
        auto read = run(get_many(*store, ids));
        auto get_time = std::chrono::steady_clock::now() - started;
        CHECK(read == size * static_cast<std::size_t>(count));
        MESSAGE(count << " x " << size / mib << " MiB, 4 MiB stripes, window " << window << ": PUT "
                      << mib_per_s(size * static_cast<std::size_t>(count), put_time) << " MiB/s, GET "
                      << mib_per_s(read, get_time) << " MiB/s");
        for (const auto& id : ids)
            REQUIRE(run(store->remove(id)).has_value());
    }
}
