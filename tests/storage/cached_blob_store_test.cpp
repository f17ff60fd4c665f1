#include "conformance.hpp"
#include "storage/cache/cached_blob_store.hpp"
#include "storage/faulty/faulty_blob_store.hpp"
#include "storage/memory/memory_blob_store.hpp"
#include "test_util.hpp"

#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>

using namespace depot;
using namespace depot::storage;
using namespace depot::storage::testing;

namespace {

constexpr std::uint64_t chunk = 1000;

/// Forwards to `inner`, but open() first waits 20 ms, so concurrent readers overlap a fetch.
class slow_store final : public blob_store
{
public:
    explicit slow_store(std::shared_ptr<blob_store> inner) : inner_(std::move(inner)) {}
    std::size_t opens = 0;
    std::size_t in_flight = 0;
    std::size_t max_in_flight = 0; ///< opens waiting at once, at most

    asio::awaitable<result<std::unique_ptr<blob_writer>>> create(write_options o) override
    {
        co_return co_await inner_->create(o);
    }
    asio::awaitable<result<std::unique_ptr<blob_reader>>> open(const blob_id& id, std::uint64_t offset,
                                                               std::uint64_t length) override
    {
        ++opens;
        max_in_flight = std::max(max_in_flight, ++in_flight);
        asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(20));
        co_await t.async_wait(asio::use_awaitable);
        --in_flight;
        co_return co_await inner_->open(id, offset, length);
    }
    asio::awaitable<result<blob_info>> stat(const blob_id& id) override
    {
        co_return co_await inner_->stat(id);
    }
    asio::awaitable<result<void>> remove(const blob_id& id) override
    {
        co_return co_await inner_->remove(id);
    }
    asio::awaitable<result<std::vector<blob_listing_entry>>> list(const blob_id& after,
                                                                  std::size_t limit) override
    {
        co_return co_await inner_->list(after, limit);
    }
    asio::awaitable<result<std::size_t>> remove_incomplete(std::chrono::system_clock::time_point t) override
    {
        co_return co_await inner_->remove_incomplete(t);
    }
    std::string_view kind() const noexcept override { return "slow"; }

private:
    std::shared_ptr<blob_store> inner_;
};

asio::awaitable<blob_id> cached_put(blob_store& store, const std::string& content)
{
    auto created = co_await store.create();
    REQUIRE(created.has_value());
    REQUIRE((co_await (*created)->write(bytes_of(content))).has_value());
    REQUIRE((co_await (*created)->commit()).has_value());
    co_return (*created)->id();
}

struct fixture
{
    std::shared_ptr<blob_store> memory = make_memory_blob_store();
    faulty_blob_store faulty = make_faulty_blob_store(memory);
    metrics::registry registry;
};

/// The registry the conformance stores report to; it outlives every store the suite makes.
metrics::registry& conformance_registry()
{
    static metrics::registry registry;
    return registry;
}

} // namespace

// depotd serves every read through the cache when it is on, so the cache must keep every contract of the
// store it wraps. Small chunks make the suite's ranged reads cross chunk boundaries.
DEPOT_BLOB_STORE_CONFORMANCE("cached (memory tier)", [] {
    return std::shared_ptr<blob_store>(make_cached_blob_store(
        make_memory_blob_store(), {.memory_bytes = 64 * chunk, .chunk_size = chunk}, conformance_registry()));
})

DEPOT_BLOB_STORE_CONFORMANCE("cached (memory and disk tiers)", [] {
    auto dir = std::make_shared<temp_dir>();
    auto cache = make_cached_blob_store(make_memory_blob_store(),
                                        {.memory_bytes = 4 * chunk,
                                         .disk_dir = dir->path.string(),
                                         .disk_bytes = 64 * chunk,
                                         .chunk_size = chunk},
                                        conformance_registry());
    return std::shared_ptr<blob_store>(cache.get(), [cache, dir](blob_store*) mutable { cache.reset(); });
})

TEST_CASE("a cached range is read from the inner store once, then from memory")
{
    fixture f;
    auto cache =
        make_cached_blob_store(f.faulty.store, {.memory_bytes = 10 * chunk, .chunk_size = chunk}, f.registry);
    const auto content = make_content(2500, 1);
    run([&]() -> asio::awaitable<void> {
        const auto id = co_await cached_put(*cache, content);
        auto first = co_await read_all(*cache, id);
        REQUIRE(first.has_value());
        CHECK(*first == content);
        CHECK(cache->stats().misses == 3);
        // Chunks 1 and 2 were fetched ahead in the background; the reader waited for them (hits).
        CHECK(cache->stats().memory_hits == 2);
        const auto calls = f.faulty.faults->operations();
        auto second = co_await read_all(*cache, id);
        REQUIRE(second.has_value());
        CHECK(*second == content);
        CHECK(f.faulty.faults->operations() == calls); // not even a stat
        CHECK(cache->stats().misses == 3);
        CHECK(cache->stats().memory_hits == 5);
        CHECK(cache->stats().memory_bytes == 2500);
    }());
}

TEST_CASE("ranges that cross chunk boundaries return exactly the requested bytes")
{
    fixture f;
    auto cache =
        make_cached_blob_store(f.faulty.store, {.memory_bytes = 10 * chunk, .chunk_size = chunk}, f.registry);
    const auto content = make_content(4321, 2);
    run([&]() -> asio::awaitable<void> {
        const auto id = co_await cached_put(*cache, content);
        const std::pair<std::uint64_t, std::uint64_t> ranges[] = {
            {0, 1}, {999, 2}, {500, 1000}, {1000, 1000}, {1, 4320}, {3999, 10'000}, {4321, 5}, {2000, 0}};
        for (auto [offset, length] : ranges) {
            auto got = co_await read_all(*cache, id, offset, length);
            REQUIRE(got.has_value());
            CHECK(*got == content.substr(offset, length));
        }
        auto past = co_await read_all(*cache, id, 4322);
        REQUIRE_FALSE(past.has_value());
        CHECK(past.error().code == errc::invalid_range);
        auto missing = co_await read_all(*cache, make_random_blob_id());
        REQUIRE_FALSE(missing.has_value());
        CHECK(missing.error().code == errc::not_found);
        CHECK(cache->stats().misses == 5);
    }());
}

TEST_CASE("eviction keeps the memory tier within its bound and counts evictions")
{
    fixture f;
    auto cache =
        make_cached_blob_store(f.faulty.store, {.memory_bytes = 3 * chunk, .chunk_size = chunk}, f.registry);
    run([&]() -> asio::awaitable<void> {
        std::vector<std::pair<blob_id, std::string>> blobs;
        for (int i = 0; i < 4; ++i) {
            auto content = make_content(2 * chunk, 10 + i);
            auto id = co_await cached_put(*cache, content);
            blobs.emplace_back(id, content);
        }
        for (auto& [id, content] : blobs) {
            auto got = co_await read_all(*cache, id);
            REQUIRE(got.has_value());
            CHECK(*got == content);
            CHECK(cache->stats().memory_bytes <= 3 * chunk);
        }
        CHECK(cache->stats().memory_evictions == 5);
        CHECK(cache->stats().memory_bytes == 3 * chunk);
        // The most recent chunks are still there: re-reading the last blob fetches nothing.
        const auto misses = cache->stats().misses;
        CHECK((co_await read_all(*cache, blobs.back().first)).has_value());
        CHECK(cache->stats().misses == misses);
        // The first blob was evicted.
        CHECK((co_await read_all(*cache, blobs.front().first)).has_value());
        CHECK(cache->stats().misses == misses + 2);
    }());
    auto text = std::string();
    f.registry.render(text);
    CHECK(text.find("depot_cache_bytes{tier=\"memory\"} 3000") != std::string::npos);
    CHECK(text.find("depot_cache_evictions_total{tier=\"memory\"} 7") != std::string::npos);
}

TEST_CASE("concurrent readers of a missing chunk wait for one fetch")
{
    metrics::registry registry;
    auto slow = std::make_shared<slow_store>(make_memory_blob_store());
    auto cache = make_cached_blob_store(slow, {.memory_bytes = 10 * chunk, .chunk_size = chunk}, registry);
    const auto content = make_content(1500, 3);
    asio::io_context ioc;
    blob_id id;
    run([&]() -> asio::awaitable<void> { id = co_await cached_put(*cache, content); }());
    int done = 0;
    for (int i = 0; i < 8; ++i)
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                auto got = co_await read_all(*cache, id);
                REQUIRE(got.has_value());
                CHECK(*got == content);
                ++done;
            },
            [](std::exception_ptr e) {
                if (e)
                    std::rethrow_exception(e);
            });
    ioc.run();
    CHECK(done == 8);
    CHECK(slow->opens == 2); // one per chunk
    CHECK(cache->stats().misses == 2);
    // Chunk 0: one reader fetched it, seven waited; chunk 1 was fetched ahead and all eight waited for it.
    CHECK(cache->stats().memory_hits == 15);
}

TEST_CASE("a cold sequential read keeps several fetches in flight")
{
    metrics::registry registry;
    auto slow = std::make_shared<slow_store>(make_memory_blob_store());
    auto cache = make_cached_blob_store(slow, {.memory_bytes = 20 * chunk, .chunk_size = chunk}, registry);
    const auto content = make_content(10 * chunk, 6);
    blob_id id;
    run([&]() -> asio::awaitable<void> { id = co_await cached_put(*cache, content); }());
    auto got = run(read_all(*cache, id));
    REQUIRE(got.has_value());
    CHECK(*got == content);
    CHECK(slow->opens == 10);
    CHECK(cache->stats().misses == 10);
    // The chunk it needs plus four ahead.
    CHECK(slow->max_in_flight == 5);
}

TEST_CASE("a failed fill reaches every waiter and the next read tries again")
{
    fixture f;
    auto cache =
        make_cached_blob_store(f.faulty.store, {.memory_bytes = 10 * chunk, .chunk_size = chunk}, f.registry);
    const auto content = make_content(800, 4);
    run([&]() -> asio::awaitable<void> {
        const auto id = co_await cached_put(*cache, content);
        f.faulty.faults->fail_nth_of(blob_op::read_some, 1, errc::io_error);
        auto failed = co_await read_all(*cache, id);
        REQUIRE_FALSE(failed.has_value());
        CHECK(failed.error().code == errc::io_error);
        auto again = co_await read_all(*cache, id);
        REQUIRE(again.has_value());
        CHECK(*again == content);
    }());
}

TEST_CASE("the disk tier serves chunks evicted from memory and stays within its bound")
{
    fixture f;
    temp_dir dir;
    std::filesystem::create_directories(dir.path / "cache");
    {
        std::ofstream stale(dir.path / "cache" / "old.0.1.chunk");
        stale << "leftover";
    }
    auto cache = make_cached_blob_store(f.faulty.store,
                                        {.memory_bytes = 2 * chunk,
                                         .disk_dir = (dir.path / "cache").string(),
                                         .disk_bytes = 4 * chunk,
                                         .chunk_size = chunk},
                                        f.registry);
    CHECK_FALSE(std::filesystem::exists(dir.path / "cache" / "old.0.1.chunk"));
    run([&]() -> asio::awaitable<void> {
        const auto a = make_content(2 * chunk, 20);
        const auto b = make_content(2 * chunk, 21);
        const auto ida = co_await cached_put(*cache, a);
        const auto idb = co_await cached_put(*cache, b);
        CHECK(*(co_await read_all(*cache, ida)) == a);
        CHECK(*(co_await read_all(*cache, idb)) == b); // evicts a from memory
        CHECK(cache->stats().misses == 4);
        CHECK(cache->stats().disk_bytes == 4 * chunk);
        const auto calls = f.faulty.faults->operations();
        CHECK(*(co_await read_all(*cache, ida)) == a);
        CHECK(f.faulty.faults->operations() == calls);
        CHECK(cache->stats().misses == 4);
        CHECK(cache->stats().disk_hits == 2);

        const auto c = make_content(3 * chunk, 22);
        const auto idc = co_await cached_put(*cache, c);
        CHECK(*(co_await read_all(*cache, idc)) == c);
        CHECK(cache->stats().disk_bytes <= 4 * chunk);
        CHECK(cache->stats().disk_evictions == 3);
        std::size_t files = 0;
        for (const auto& e : std::filesystem::directory_iterator(dir.path / "cache")) {
            (void)e;
            ++files;
        }
        CHECK(files == 4);

        // Removing a blob drops its chunks from both tiers.
        REQUIRE((co_await cache->remove(idc)).has_value());
        CHECK(cache->stats().disk_bytes == 1 * chunk);
        auto gone = co_await read_all(*cache, idc);
        REQUIRE_FALSE(gone.has_value());
        CHECK(gone.error().code == errc::not_found);
    }());
}

TEST_CASE("prefetch fills the cache so that later reads make no inner calls")
{
    fixture f;
    auto cache =
        make_cached_blob_store(f.faulty.store, {.memory_bytes = 10 * chunk, .chunk_size = chunk}, f.registry);
    const auto content = make_content(3500, 5);
    run([&]() -> asio::awaitable<void> {
        const auto id = co_await cached_put(*cache, content);
        auto n = co_await cache->prefetch(id);
        REQUIRE(n.has_value());
        CHECK(*n == 3500);
        CHECK(cache->stats().misses == 4);
        const auto calls = f.faulty.faults->operations();
        auto got = co_await read_all(*cache, id, 1200, 2000);
        REQUIRE(got.has_value());
        CHECK(*got == content.substr(1200, 2000));
        CHECK(f.faulty.faults->operations() == calls);
        auto missing = co_await cache->prefetch(make_random_blob_id());
        REQUIRE_FALSE(missing.has_value());
        CHECK(missing.error().code == errc::not_found);
    }());
}
