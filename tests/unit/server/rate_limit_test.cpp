#include "server/rate_limit.hpp"

#include <doctest/doctest.h>

using depot::server::rate_limiter;
using namespace std::chrono_literals;

TEST_CASE("a disabled limiter admits everything")
{
    rate_limiter off(0, 0);
    CHECK_FALSE(off.enabled());
    for (int i = 0; i < 1000; ++i)
        CHECK(off.admit("AKIA"));
}

TEST_CASE("a credential gets its burst at once, then its rate, and others are unaffected")
{
    rate_limiter limiter(10, 5);
    const auto t0 = rate_limiter::clock::time_point{} + 1h;
    for (int i = 0; i < 5; ++i)
        CHECK(limiter.admit("alice", t0));
    CHECK_FALSE(limiter.admit("alice", t0));
    CHECK(limiter.admit("bob", t0)); // a bucket of its own
    // 10 per second: one token every 100 ms.
    CHECK_FALSE(limiter.admit("alice", t0 + 50ms));
    CHECK(limiter.admit("alice", t0 + 150ms));
    CHECK_FALSE(limiter.admit("alice", t0 + 150ms));
    // Refill never exceeds the burst.
    const auto later = t0 + 1h;
    for (int i = 0; i < 5; ++i)
        CHECK(limiter.admit("alice", later));
    CHECK_FALSE(limiter.admit("alice", later));
}

TEST_CASE("idle buckets are swept and behave as new ones")
{
    rate_limiter limiter(1, 2);
    const auto t0 = rate_limiter::clock::time_point{} + 1h;
    CHECK(limiter.admit("a", t0));
    CHECK(limiter.admit("a", t0));
    CHECK_FALSE(limiter.admit("a", t0));
    // After the sweep interval "a" has refilled; a fresh bucket grants the full burst again.
    const auto later = t0 + 30s;
    CHECK(limiter.admit("a", later));
    CHECK(limiter.admit("a", later));
    CHECK_FALSE(limiter.admit("a", later));
}
