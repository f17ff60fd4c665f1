#include "storage/blob_store.hpp"
#include "storage/memory/memory_blob_store.hpp"
#include "test_util.hpp"

#include <doctest/doctest.h>

using namespace depot;
using namespace depot::storage;
using namespace depot::storage::testing;

TEST_CASE("generated blob ids are 32 lower-case hex characters and valid")
{
    auto id = make_random_blob_id();
    CHECK(id.size() == 32);
    CHECK(id.find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(is_valid_blob_id(id));
    CHECK(make_random_blob_id() != id);
}

TEST_CASE("blob id validation accepts 1 to 64 characters of [0-9a-z] and nothing else")
{
    CHECK(is_valid_blob_id("a"));
    CHECK(is_valid_blob_id("0z9"));
    CHECK(is_valid_blob_id(std::string(64, 'z')));
    CHECK_FALSE(is_valid_blob_id(""));
    CHECK_FALSE(is_valid_blob_id(std::string(65, 'a')));
    CHECK_FALSE(is_valid_blob_id("ABC"));
    CHECK_FALSE(is_valid_blob_id("ab/cd"));
    CHECK_FALSE(is_valid_blob_id(".."));
    CHECK_FALSE(is_valid_blob_id("a-b"));
    CHECK_FALSE(is_valid_blob_id(std::string("a\0b", 3)));
}

TEST_CASE("read_all returns a whole blob or a range and passes errors through")
{
    auto store = make_memory_blob_store();
    const auto content = make_content(300'000, 9);
    run([&]() -> asio::awaitable<void> {
        auto created = co_await store->create();
        REQUIRE(created.has_value());
        REQUIRE((co_await (*created)->write(bytes_of(content))).has_value());
        REQUIRE((co_await (*created)->commit()).has_value());
        const auto id = (*created)->id();

        auto whole = co_await read_all(*store, id);
        REQUIRE(whole.has_value());
        CHECK(*whole == content);
        auto exact = co_await read_all(*store, id, 65'536, 65'536);
        REQUIRE(exact.has_value());
        CHECK(*exact == content.substr(65'536, 65'536));
        auto tail = co_await read_all(*store, id, 299'999, 10);
        REQUIRE(tail.has_value());
        CHECK(*tail == content.substr(299'999));

        auto missing = co_await read_all(*store, make_random_blob_id());
        REQUIRE_FALSE(missing.has_value());
        CHECK(missing.error().code == errc::not_found);
        auto past = co_await read_all(*store, id, 300'001);
        REQUIRE_FALSE(past.has_value());
        CHECK(past.error().code == errc::invalid_range);
    }());
}
