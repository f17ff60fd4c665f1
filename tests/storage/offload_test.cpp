#include "common/result.hpp"
#include "storage/offload.hpp"
#include "test_util.hpp"

#include <boost/asio/strand.hpp>
#include <doctest/doctest.h>
#include <stdexcept>
#include <thread>

using namespace depot;
using namespace depot::storage;
using namespace depot::storage::testing;

TEST_CASE("run_blocking hands the function's value back to the awaiting coroutine")
{
    asio::thread_pool pool(2);
    CHECK(run(run_blocking(pool, [] {
              std::this_thread::sleep_for(std::chrono::milliseconds(20)); // outlives a premature run() return
              return 42;
          })) == 42);
    auto moved = run(run_blocking(pool, [] { return std::make_unique<std::string>("move-only"); }));
    REQUIRE(moved);
    CHECK(*moved == "move-only");
    auto res =
        run(run_blocking(pool, []() -> result<std::string> { return make_error(errc::not_found, "gone"); }));
    REQUIRE_FALSE(res.has_value());
    CHECK(res.error().code == errc::not_found);
    int touched = 0;
    run(run_blocking(pool, [&] { touched = 7; }));
    CHECK(touched == 7);
}

TEST_CASE("run_blocking rethrows the function's exception in the awaiting coroutine")
{
    asio::thread_pool pool(1);
    CHECK_THROWS_WITH_AS(run(run_blocking(pool, []() -> int { throw std::runtime_error("disk on fire"); })),
                         "disk on fire", std::runtime_error);
    CHECK_THROWS_AS(run(run_blocking(pool, [] { throw std::out_of_range("void too"); })), std::out_of_range);
    // The pool survives a throwing function.
    CHECK(run(run_blocking(pool, [] { return 1; })) == 1);
}

TEST_CASE("run_blocking runs the function on the pool and resumes the caller on its own thread")
{
    asio::thread_pool pool(1);
    const auto caller = std::this_thread::get_id();
    auto [ran_on, resumed_on] = run([&]() -> asio::awaitable<std::pair<std::thread::id, std::thread::id>> {
        auto ran = co_await run_blocking(pool, [] { return std::this_thread::get_id(); });
        co_return std::pair{ran, std::this_thread::get_id()};
    }());
    CHECK(ran_on != caller);
    CHECK(resumed_on == caller);
}

TEST_CASE("run_blocking resumes a coroutine on the strand it was running on")
{
    asio::thread_pool pool(2);
    asio::io_context ioc(4);
    auto strand = asio::make_strand(ioc);
    std::atomic<int> on_strand{0};
    std::atomic<int> off_strand{0};
    constexpr int coroutines = 20;
    for (int i = 0; i < coroutines; ++i)
        asio::co_spawn(
            strand,
            [&]() -> asio::awaitable<void> {
                for (int round = 0; round < 5; ++round) {
                    bool pool_thread_on_strand =
                        co_await run_blocking(pool, [&] { return strand.running_in_this_thread(); });
                    if (pool_thread_on_strand)
                        ++off_strand;
                    if (strand.running_in_this_thread())
                        ++on_strand;
                    else
                        ++off_strand;
                }
            },
            [&](std::exception_ptr e) { off_strand += e ? 1 : 0; });
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] { ioc.run(); });
    for (auto& t : threads)
        t.join();
    CHECK(on_strand == coroutines * 5);
    CHECK(off_strand == 0);
}
