#include "conformance.hpp"
#include "storage/faulty/faulty_blob_store.hpp"
#include "storage/memory/memory_blob_store.hpp"
#include "test_util.hpp"

#include <stdexcept>

using namespace depot;
using namespace depot::storage;
using namespace depot::storage::testing;

// With nothing armed the wrapper must be indistinguishable from the store it wraps.
DEPOT_BLOB_STORE_CONFORMANCE("faulty (memory, no faults armed)",
                             [] { return make_faulty_blob_store(make_memory_blob_store()).store; })

namespace {

/// Uploads `content` the way an upper layer should: on any failure abort and report it.
asio::awaitable<result<blob_id>> upload(blob_store& store, std::string_view content)
{
    auto created = co_await store.create();
    if (!created)
        co_return std::move(created).error();
    auto& writer = **created;
    for (std::size_t at = 0; at < content.size(); at += 1000) {
        if (auto w = co_await writer.write(bytes_of(content.substr(at, 1000))); !w) {
            co_await writer.abort();
            co_return std::move(w).error();
        }
    }
    if (auto c = co_await writer.commit(); !c) {
        co_await writer.abort();
        co_return std::move(c).error();
    }
    co_return writer.id();
}

} // namespace

TEST_CASE("a faulty store fails exactly the nth call with the chosen code and passes the others through")
{
    auto [store, faults] = make_faulty_blob_store(make_memory_blob_store());
    run([&]() -> asio::awaitable<void> {
        faults->fail_nth(3, errc::unavailable);
        auto created = co_await store->create(); // 1
        REQUIRE(created.has_value());
        auto& writer = **created;
        REQUIRE((co_await writer.write(bytes_of("abc"))).has_value()); // 2
        auto committed = co_await writer.commit();                     // 3
        REQUIRE_FALSE(committed.has_value());
        CHECK(committed.error().code == errc::unavailable);
        CHECK(faults->injected() == 1);
        CHECK(faults->last_injected() == blob_op::commit);

        // The writer stays failed, as a real one would, and the blob never appeared.
        auto again = co_await writer.commit(); // not counted: the writer failed already
        REQUIRE_FALSE(again.has_value());
        CHECK(again.error().code == errc::unavailable);
        co_await writer.abort();
        auto info = co_await store->stat(writer.id()); // 4
        REQUIRE_FALSE(info.has_value());
        CHECK(info.error().code == errc::not_found);

        // Everything after the armed call passes through.
        auto ok_upload = co_await upload(*store, "fine"); // 5, 6, 7
        REQUIRE(ok_upload.has_value());
        auto back = co_await read_all(*store, *ok_upload); // 8, 9, 10
        REQUIRE(back.has_value());
        CHECK(*back == "fine");
        CHECK(faults->operations() == 10);
        CHECK(faults->injected() == 1);
    }());
}

TEST_CASE("a faulty store can fail the nth call of one kind only")
{
    auto [store, faults] = make_faulty_blob_store(make_memory_blob_store());
    run([&]() -> asio::awaitable<void> {
        auto id = co_await upload(*store, make_content(5000, 1));
        REQUIRE(id.has_value());
        faults->fail_nth_of(blob_op::read_some, 2);
        auto opened = co_await store->open(*id, 0, 5000);
        REQUIRE(opened.has_value());
        std::array<std::byte, 1000> buf{};
        auto first = co_await (*opened)->read_some(buf);
        REQUIRE(first.has_value());
        CHECK(*first == 1000);
        auto second = co_await (*opened)->read_some(buf);
        REQUIRE_FALSE(second.has_value());
        CHECK(second.error().code == errc::io_error);
        CHECK(second.error().message.find("read_some") != std::string::npos);
        auto third = co_await (*opened)->read_some(buf);
        REQUIRE(third.has_value());
        CHECK(*third == 1000);
    }());
}

TEST_CASE("a faulty store fails every call while fail_all is on and none after heal")
{
    auto [store, faults] = make_faulty_blob_store(make_memory_blob_store());
    run([&]() -> asio::awaitable<void> {
        auto id = co_await upload(*store, "kept");
        REQUIRE(id.has_value());
        faults->fail_all(errc::unavailable);
        auto created = co_await store->create();
        CHECK((!created && created.error().code == errc::unavailable));
        auto opened = co_await store->open(*id, 0, 10);
        CHECK((!opened && opened.error().code == errc::unavailable));
        auto info = co_await store->stat(*id);
        CHECK((!info && info.error().code == errc::unavailable));
        auto removed = co_await store->remove(*id);
        CHECK((!removed && removed.error().code == errc::unavailable));
        auto listed = co_await store->list("", 10);
        CHECK((!listed && listed.error().code == errc::unavailable));
        auto reclaimed = co_await store->remove_incomplete(std::chrono::system_clock::now());
        CHECK((!reclaimed && reclaimed.error().code == errc::unavailable));
        CHECK(faults->injected() == 6);

        faults->heal();
        auto back = co_await read_all(*store, *id);
        REQUIRE(back.has_value());
        CHECK(*back == "kept");
    }());
}

TEST_CASE("a faulty store can make the nth call throw like an infrastructure failure")
{
    auto [store, faults] = make_faulty_blob_store(make_memory_blob_store());
    faults->throw_nth(2);
    CHECK(run(store->list("", 1)).has_value());
    CHECK_THROWS_AS(run(store->stat("abc")), std::runtime_error);
    CHECK(run(store->list("", 1)).has_value());
    CHECK(faults->injected() == 1);
}

TEST_CASE("failing each storage call of an upload in turn leaves no blob and no leftovers when it aborts")
{
    // Count the calls of a clean run, then fail each one of them in turn.
    const auto content = make_content(3500, 2);
    std::size_t calls = 0;
    {
        auto [store, faults] = make_faulty_blob_store(make_memory_blob_store());
        REQUIRE(run(upload(*store, content)).has_value());
        calls = faults->operations();
    }
    CHECK(calls == 6); // create, 4 writes, commit
    for (std::size_t n = 1; n <= calls; ++n) {
        CAPTURE(n);
        auto memory = std::shared_ptr<blob_store>(make_memory_blob_store());
        auto [store, faults] = make_faulty_blob_store(memory);
        faults->fail_nth(n);
        auto uploaded = run(upload(*store, content));
        CHECK_FALSE(uploaded.has_value());
        CHECK(faults->injected() == 1);
        auto listed = run(memory->list("", 10));
        REQUIRE(listed.has_value());
        CHECK(listed->empty());
        // The memory store remembers writers that were dropped without abort; there must be none.
        auto leftovers =
            run(memory->remove_incomplete(std::chrono::system_clock::now() + std::chrono::hours(1)));
        REQUIRE(leftovers.has_value());
        CHECK(*leftovers == 0);
    }
}
