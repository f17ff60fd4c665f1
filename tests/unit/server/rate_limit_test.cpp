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

// Issue 22 item 8: limits per client address.
TEST_CASE("addresses are grouped: IPv4 alone, IPv4-mapped as IPv4, IPv6 by its /64")
{
    using depot::server::address_key;
    CHECK(address_key("192.0.2.7") == "192.0.2.7");
    CHECK(address_key("::ffff:192.0.2.7") == "192.0.2.7");
    CHECK(address_key("2001:db8:1:2:aaaa:bbbb:cccc:dddd") == "2001:db8:1:2::/64");
    CHECK(address_key("2001:db8:1:2::1") == address_key("2001:db8:1:2:ffff::9"));
    CHECK(address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1"));
    CHECK(address_key("not an address") == "not an address");
}

TEST_CASE("connections per address are capped and freed")
{
    depot::server::address_counter c;
    CHECK(c.try_add("a", 2));
    CHECK(c.try_add("a", 2));
    CHECK_FALSE(c.try_add("a", 2));
    CHECK(c.try_add("b", 2));
    c.remove("a");
    CHECK(c.count("a") == 1);
    CHECK(c.try_add("a", 2));
    CHECK(c.try_add("c", 0)); // 0 = no limit
}

TEST_CASE("an address that fails to authenticate too often cools down, then is admitted again")
{
    using depot::server::auth_failure_limiter;
    using namespace std::chrono_literals;
    auth_failure_limiter l({.limit = 3, .window = 60s, .cooldown = 30s});
    const auto t0 = auth_failure_limiter::clock::now();
    l.failed("a", t0);
    l.failed("a", t0 + 1s);
    CHECK_FALSE(l.refused("a", t0 + 2s));
    l.failed("a", t0 + 2s);
    auto wait = l.refused("a", t0 + 3s);
    REQUIRE(wait);
    CHECK(*wait == 29s);
    CHECK_FALSE(l.refused("b", t0 + 3s)); // other addresses are not affected
    CHECK_FALSE(l.refused("a", t0 + 32s));
    // Failures spread wider than the window never add up.
    l.failed("b", t0);
    l.failed("b", t0 + 61s);
    l.failed("b", t0 + 122s);
    CHECK_FALSE(l.refused("b", t0 + 123s));
    // Off: never refuses.
    auth_failure_limiter off({.limit = 0});
    for (int i = 0; i < 10; ++i)
        off.failed("a", t0);
    CHECK_FALSE(off.refused("a", t0));
}
