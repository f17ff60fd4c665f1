#include "conformance.hpp"
#include "storage/memory/memory_blob_store.hpp"
#include "test_util.hpp"

using namespace depot;
using namespace depot::storage;
using namespace depot::storage::testing;

DEPOT_BLOB_STORE_CONFORMANCE("memory", [] { return make_memory_blob_store(); })

TEST_CASE("a memory writer destroyed without abort stays countable by remove_incomplete")
{
    auto store = make_memory_blob_store();
    run([&]() -> asio::awaitable<void> {
        {
            auto forgotten = co_await store->create();
            REQUIRE(forgotten.has_value());
            REQUIRE((co_await (*forgotten)->write(bytes_of("x"))).has_value());
        }
        {
            auto aborted = co_await store->create();
            REQUIRE(aborted.has_value());
            co_await (*aborted)->abort();
        }
        auto reclaimed =
            co_await store->remove_incomplete(std::chrono::system_clock::now() + std::chrono::hours(1));
        REQUIRE(reclaimed.has_value());
        CHECK(*reclaimed == 1);
    }());
}

TEST_CASE("a memory blob stays readable by a reader opened before it was removed")
{
    auto store = make_memory_blob_store();
    run([&]() -> asio::awaitable<void> {
        auto created = co_await store->create();
        REQUIRE(created.has_value());
        REQUIRE((co_await (*created)->write(bytes_of("still here"))).has_value());
        REQUIRE((co_await (*created)->commit()).has_value());
        auto reader = co_await store->open((*created)->id(), 0, 100);
        REQUIRE(reader.has_value());
        REQUIRE((co_await store->remove((*created)->id())).has_value());
        std::array<std::byte, 32> buf{};
        auto n = co_await (*reader)->read_some(buf);
        REQUIRE(n.has_value());
        CHECK(std::string(reinterpret_cast<const char*>(buf.data()), *n) == "still here");
    }());
}
