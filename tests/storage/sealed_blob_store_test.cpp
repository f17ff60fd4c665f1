#include "common/hash.hpp"
#include "conformance.hpp"
#include "storage/memory/memory_blob_store.hpp"
#include "storage/sealed/sealed_blob_store.hpp"
#include "storage/sealed/sealed_format.hpp"
#include "test_util.hpp"

#include <doctest/doctest.h>

using namespace depot;
using namespace depot::storage;
using namespace depot::storage::testing;

namespace {

/// A sealed store over a fresh memory store, keeping the memory store alive with it.
std::shared_ptr<blob_store> sealed_over(std::shared_ptr<blob_store> inner, std::string key)
{
    auto outer = make_sealed_blob_store(*inner, std::move(key));
    return std::shared_ptr<blob_store>(outer.release(), [inner](blob_store* p) { delete p; });
}

const std::string master(32, 'k');

asio::awaitable<std::string> sealed_put(blob_store& store, const std::string& content,
                                        std::size_t chunk = 7000)
{
    auto w = co_await store.create({.size_hint = content.size()});
    REQUIRE(w.has_value());
    for (std::size_t at = 0; at < content.size(); at += chunk) {
        const auto piece = std::string_view(content).substr(at, chunk);
        REQUIRE((co_await (*w)->write(std::as_bytes(std::span(piece.data(), piece.size())))).has_value());
    }
    REQUIRE((co_await (*w)->commit()).has_value());
    co_return (*w)->id();
}

/// Replaces the raw (sealed) bytes of blob `id` in `inner` by `raw`, under a new id.
asio::awaitable<std::string> put_raw(blob_store& inner, const std::string& raw)
{
    co_return co_await sealed_put(inner, raw, raw.size() + 1);
}

} // namespace

DEPOT_BLOB_STORE_CONFORMANCE("sealed", [] {
    return sealed_over(std::shared_ptr<blob_store>(make_memory_blob_store()), master);
})

TEST_CASE("sealed sizes: every plaintext size maps to one sealed size and back")
{
    using namespace sealed;
    for (std::uint64_t n :
         {0ull, 1ull, 100ull, 65535ull, 65536ull, 65537ull, 131072ull, 131073ull, 5000000ull}) {
        CAPTURE(n);
        CHECK(plain_size(sealed_size(n)) == n);
    }
    CHECK(sealed_size(0) == header_size + tag_size);
    CHECK(sealed_size(segment_plain) == header_size + segment_sealed);
    // Sizes no writer produces: shorter than a header and an empty segment, or an empty segment after full
    // ones.
    CHECK_FALSE(plain_size(header_size).has_value());
    CHECK_FALSE(plain_size(header_size + segment_sealed + tag_size).has_value());
    CHECK_FALSE(plain_size(header_size + 5).has_value());
}

TEST_CASE("a sealed blob round-trips and stores no plaintext")
{
    auto inner = std::shared_ptr<blob_store>(make_memory_blob_store());
    auto store = sealed_over(inner, master);
    run([&]() -> asio::awaitable<void> {
        const std::size_t sizes[] = {0,
                                     1,
                                     sealed::segment_plain - 1,
                                     sealed::segment_plain,
                                     sealed::segment_plain + 1,
                                     3 * sealed::segment_plain,
                                     200000};
        for (std::size_t n : sizes) {
            CAPTURE(n);
            const auto content = make_content(n, n + 1);
            auto id = co_await sealed_put(*store, content);
            auto back = co_await read_all(*store, id);
            REQUIRE(back.has_value());
            CHECK(*back == content);
            auto raw = co_await read_all(*inner, id);
            REQUIRE(raw.has_value());
            CHECK(raw->size() == sealed::sealed_size(n));
            if (n >= 16)
                CHECK(raw->find(content.substr(0, 16)) == std::string::npos);
            auto info = co_await store->stat(id);
            REQUIRE(info.has_value());
            CHECK(info->size == n);
        }
    }());
}

TEST_CASE("sealed range reads decrypt exactly the bytes asked for, across segment edges")
{
    auto inner = std::shared_ptr<blob_store>(make_memory_blob_store());
    auto store = sealed_over(inner, master);
    const std::size_t s = sealed::segment_plain;
    const auto content = make_content(3 * s + 123, 9);
    run([&]() -> asio::awaitable<void> {
        auto id = co_await sealed_put(*store, content, 100000);
        const std::pair<std::uint64_t, std::uint64_t> ranges[] = {
            {0, 1},           {s - 1, 1},      {s - 1, 2},      {s, s},
            {s + 1, s},       {2 * s - 5, 10}, {3 * s, 123},    {3 * s + 122, 1},
            {3 * s + 123, 0}, {5, 3 * s},      {0, UINT64_MAX}, {2 * s, UINT64_MAX}};
        for (auto [off, len] : ranges) {
            CAPTURE(off);
            CAPTURE(len);
            auto got = co_await read_all(*store, id, off, len);
            REQUIRE(got.has_value());
            CHECK(*got == content.substr(off, len == UINT64_MAX ? std::string::npos : len));
        }
        auto beyond = co_await store->open(id, 3 * s + 124, 1);
        REQUIRE_FALSE(beyond.has_value());
        CHECK(beyond.error().code == errc::invalid_range);
    }());
}

TEST_CASE("a tampered, truncated, reordered or foreign-key sealed blob is an error, never wrong bytes")
{
    auto inner = std::shared_ptr<blob_store>(make_memory_blob_store());
    auto store = sealed_over(inner, master);
    const std::size_t s = sealed::segment_plain;
    const auto content = make_content(2 * s + 10, 3);
    run([&]() -> asio::awaitable<void> {
        auto id = co_await sealed_put(*store, content);
        auto raw = *(co_await read_all(*inner, id));
        auto expect_refused = [&](const std::string& bad, std::uint64_t off,
                                  std::uint64_t len) -> asio::awaitable<void> {
            auto bad_id = co_await put_raw(*inner, bad);
            auto got = co_await read_all(*store, bad_id, off, len);
            REQUIRE_FALSE(got.has_value());
            CHECK((got.error().code == errc::io_error || got.error().code == errc::invalid_range));
        };
        {
            auto flipped = raw; // one ciphertext bit in the second segment
            flipped[sealed::header_size + sealed::segment_sealed + 100] ^= 1;
            co_await expect_refused(flipped, s, 10);
        }
        {
            auto flipped = raw; // the wrapped key
            flipped[10] ^= 1;
            co_await expect_refused(flipped, 0, 1);
        }
        {
            // Truncated at a segment boundary: the second segment was not sealed as the last one.
            co_await expect_refused(raw.substr(0, sealed::header_size + 2 * sealed::segment_sealed), s, 10);
        }
        {
            // The first two segments swapped.
            auto swapped = raw;
            const auto a = raw.substr(sealed::header_size, sealed::segment_sealed);
            const auto b = raw.substr(sealed::header_size + sealed::segment_sealed, sealed::segment_sealed);
            swapped.replace(sealed::header_size, sealed::segment_sealed, b);
            swapped.replace(sealed::header_size + sealed::segment_sealed, sealed::segment_sealed, a);
            co_await expect_refused(swapped, 0, 10);
        }
        {
            // Plaintext that is no sealed blob at all.
            co_await expect_refused(content, 0, 10);
        }
        // Another wrapping key cannot read it.
        auto other = sealed_over(inner, std::string(32, 'x'));
        auto got = co_await read_all(*other, id);
        REQUIRE_FALSE(got.has_value());
        CHECK(got.error().code == errc::io_error);
    }());
}

TEST_CASE("every sealed blob gets its own data key: equal plaintexts seal to different bytes")
{
    auto inner = std::shared_ptr<blob_store>(make_memory_blob_store());
    auto store = sealed_over(inner, master);
    run([&]() -> asio::awaitable<void> {
        const auto content = make_content(1000, 1);
        auto a = co_await sealed_put(*store, content);
        auto b = co_await sealed_put(*store, content);
        CHECK(*(co_await read_all(*inner, a)) != *(co_await read_all(*inner, b)));
    }());
}
