// The in-memory access key and bucket cache: what it serves, when it refuses to, and every way an entry
// leaves it. (Its notices from PostgreSQL are tested against a real database in
// tests/integration/lookup_cache_test.cpp.)
#include "registry/service/lookup_cache.hpp"

#include <doctest/doctest.h>
#include <thread>

using namespace depot;
using registry::lookup_cache;

namespace {

registry::access_key key_named(std::string id)
{
    return registry::access_key{.access_key_id = std::move(id), .user_id = "alice", .secret = "s3cret"};
}

registry::bucket bucket_named(std::string name, std::int64_t id)
{
    registry::bucket b;
    b.id = id;
    b.name = std::move(name);
    b.owner_id = "alice";
    return b;
}

} // namespace

TEST_CASE("lookup cache: serves nothing and stores nothing until it is listening")
{
    lookup_cache cache({});
    cache.store_key(cache.ticket(), key_named("AK1"));
    cache.store_bucket(cache.ticket(), bucket_named("b", 1));
    CHECK_FALSE(cache.find_key("AK1"));
    CHECK_FALSE(cache.find_bucket("b"));

    cache.listening();
    CHECK(cache.is_listening());
    CHECK_FALSE(cache.find_key("AK1")); // not stored while deaf
    cache.store_key(cache.ticket(), key_named("AK1"));
    cache.store_bucket(cache.ticket(), bucket_named("b", 1));
    REQUIRE(cache.find_key("AK1"));
    CHECK(cache.find_key("AK1")->secret == "s3cret");
    REQUIRE(cache.find_bucket("b"));
    CHECK(cache.find_bucket("b")->id == 1);
    CHECK_FALSE(cache.find_key("AK2"));
    CHECK_FALSE(cache.find_bucket("c"));
}

TEST_CASE("lookup cache: losing the LISTEN connection drops everything and stops its use until it is back")
{
    lookup_cache cache({});
    cache.listening();
    cache.store_key(cache.ticket(), key_named("AK1"));
    cache.store_bucket(cache.ticket(), bucket_named("b", 1));
    cache.not_listening();
    CHECK_FALSE(cache.is_listening());
    CHECK_FALSE(cache.find_key("AK1"));
    CHECK_FALSE(cache.find_bucket("b"));
    // Back: what was cached before the loss is not served again (its notices may have been lost).
    cache.listening();
    CHECK_FALSE(cache.find_key("AK1"));
    CHECK_FALSE(cache.find_bucket("b"));
}

TEST_CASE("lookup cache: an answer read before an invalidation is not stored")
{
    lookup_cache cache({});
    cache.listening();
    SUBCASE("a notice for another key still counts (the ticket is one generation for everything)")
    {
        auto ticket = cache.ticket();
        cache.notified("key:OTHER");
        cache.store_key(ticket, key_named("AK1"));
        CHECK_FALSE(cache.find_key("AK1"));
    }
    SUBCASE("reconnect")
    {
        auto ticket = cache.ticket();
        cache.not_listening();
        cache.listening();
        cache.store_bucket(ticket, bucket_named("b", 1));
        CHECK_FALSE(cache.find_bucket("b"));
    }
    SUBCASE("a change made here")
    {
        auto ticket = cache.ticket();
        cache.forget_bucket_id(7);
        cache.store_bucket(ticket, bucket_named("b", 1));
        CHECK_FALSE(cache.find_bucket("b"));
        // A fresh ticket stores.
        cache.store_bucket(cache.ticket(), bucket_named("b", 1));
        CHECK(cache.find_bucket("b"));
    }
}

TEST_CASE("lookup cache: notices and local changes remove exactly what they name")
{
    lookup_cache cache({});
    cache.listening();
    auto fill = [&] {
        cache.store_key(cache.ticket(), key_named("AK1"));
        cache.store_key(cache.ticket(), key_named("AK2"));
        cache.store_bucket(cache.ticket(), bucket_named("one", 1));
        cache.store_bucket(cache.ticket(), bucket_named("two", 2));
    };
    fill();
    cache.notified("key:AK1");
    CHECK_FALSE(cache.find_key("AK1"));
    CHECK(cache.find_key("AK2"));
    CHECK(cache.find_bucket("one"));

    cache.notified("bucket:one");
    CHECK_FALSE(cache.find_bucket("one"));
    CHECK(cache.find_bucket("two"));
    CHECK(cache.find_key("AK2"));

    fill();
    cache.forget_bucket_id(2);
    CHECK_FALSE(cache.find_bucket("two"));
    CHECK(cache.find_bucket("one"));
    cache.forget_key("AK2");
    CHECK_FALSE(cache.find_key("AK2"));
    cache.forget_bucket("one");
    CHECK_FALSE(cache.find_bucket("one"));

    fill();
    cache.notified("all");
    CHECK_FALSE(cache.find_key("AK1"));
    CHECK_FALSE(cache.find_bucket("two"));
    fill();
    cache.notified("something this version does not know");
    CHECK_FALSE(cache.find_key("AK2"));
    CHECK_FALSE(cache.find_bucket("one"));
    // A bucket named like a payload prefix is only a name.
    cache.store_bucket(cache.ticket(), bucket_named("key:AK1", 3));
    cache.notified("bucket:key:AK1");
    CHECK_FALSE(cache.find_bucket("key:AK1"));
}

TEST_CASE("lookup cache: a key past its expiry is not served")
{
    lookup_cache cache({});
    cache.listening();
    auto expiring = key_named("AK1");
    expiring.expires_at = std::chrono::system_clock::now() + std::chrono::milliseconds(50);
    cache.store_key(cache.ticket(), expiring);
    CHECK(cache.find_key("AK1"));
    std::this_thread::sleep_for(std::chrono::milliseconds(80));
    CHECK_FALSE(cache.find_key("AK1"));
    auto expired = key_named("AK2");
    expired.expires_at = std::chrono::system_clock::now() - std::chrono::seconds(1);
    cache.store_key(cache.ticket(), expired);
    CHECK_FALSE(cache.find_key("AK2"));
}

TEST_CASE("lookup cache: entries are served for max_age at most; max_age 0 stores nothing")
{
    lookup_cache brief({.max_age = std::chrono::milliseconds(50)});
    brief.listening();
    brief.store_bucket(brief.ticket(), bucket_named("b", 1));
    CHECK(brief.find_bucket("b"));
    std::this_thread::sleep_for(std::chrono::milliseconds(80));
    CHECK_FALSE(brief.find_bucket("b"));

    lookup_cache off({.max_age = std::chrono::seconds(0)});
    off.listening();
    off.store_key(off.ticket(), key_named("AK1"));
    CHECK_FALSE(off.find_key("AK1"));
}

TEST_CASE("lookup cache: a full map starts over instead of growing")
{
    lookup_cache cache({.max_entries = 3});
    cache.listening();
    for (int i = 0; i < 3; ++i)
        cache.store_bucket(cache.ticket(), bucket_named("b" + std::to_string(i), i));
    CHECK(cache.find_bucket("b0"));
    cache.store_bucket(cache.ticket(), bucket_named("b3", 3));
    CHECK_FALSE(cache.find_bucket("b0"));
    CHECK(cache.find_bucket("b3"));
}
