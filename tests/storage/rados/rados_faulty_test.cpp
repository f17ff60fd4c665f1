#include "rados_test_env.hpp"
#include "storage/faulty/faulty_blob_store.hpp"
#include "storage/test_util.hpp"

#include <chrono>
#include <doctest/doctest.h>
#include <stdexcept>
#include <thread>

using namespace depot;
using namespace depot::storage;
using namespace depot::storage::testing;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t faulty_stripe = 64 * 1024;

struct attempt
{
    blob_id id;
    bool committed = false;
    bool read_back = false;
};

/// An upload as an upper layer does it (abort on any failure), then a read of the whole blob.
asio::awaitable<attempt> upload_and_read(blob_store& store, const std::string& content, attempt& out)
{
    auto created = co_await store.create({.size_hint = content.size()});
    if (!created)
        co_return out;
    auto& writer = **created;
    out.id = writer.id();
    for (std::size_t at = 0; at < content.size(); at += 30'000) {
        if (!co_await writer.write(bytes_of(std::string_view(content).substr(at, 30'000)))) {
            co_await writer.abort();
            co_return out;
        }
    }
    if (!co_await writer.commit()) {
        co_await writer.abort();
        co_return out;
    }
    out.committed = true;
    auto back = co_await read_all(store, out.id);
    out.read_back = back && *back == content;
    co_return out;
}

/// Every committed blob reads back intact and the namespace holds their objects and nothing else.
void check_only_whole_blobs(blob_store& inner, const std::string& ns, const std::vector<blob_id>& committed,
                            const std::string& content)
{
    for (const auto& id : committed) {
        auto back = run(read_all(inner, id));
        REQUIRE(back.has_value());
        CHECK(*back == content);
    }
    auto listed = run(inner.list("", 1000));
    REQUIRE(listed.has_value());
    CHECK(listed->size() == committed.size());
    // 150,000 bytes in 64 KiB stripes: a head and three stripes each.
    CHECK(ceph_inspector::get().objects(ns).size() == 4 * committed.size());
}

} // namespace

TEST_CASE("with any one storage call failing, a RADOS upload and read leave a whole blob or nothing" *
          doctest::skip(!ceph_configured()))
{
    auto options = ceph_test_options();
    REQUIRE(options);
    options->stripe_size = faulty_stripe;
    options->window = 2;
    auto inner = make_test_rados_store(*options);
    auto [store, faults] = make_faulty_blob_store(inner);
    const auto content = make_content(150'000, 31);

    // A clean run counts the calls the sequence makes.
    std::vector<blob_id> committed;
    attempt clean;
    run(upload_and_read(*store, content, clean));
    REQUIRE(clean.read_back);
    committed.push_back(clean.id);
    const auto calls = faults->operations();
    REQUIRE(calls >= 8);

    for (std::size_t n = 1; n <= calls; ++n) {
        CAPTURE(n);
        faults->fail_nth(n, n % 2 ? errc::unavailable : errc::io_error);
        attempt a;
        run(upload_and_read(*store, content, a));
        faults->heal();
        if (a.committed) {
            // Only the read failed: the blob is whole.
            CHECK_FALSE(a.read_back);
            committed.push_back(a.id);
        } else if (!a.id.empty()) {
            auto info = run(inner->stat(a.id));
            REQUIRE_FALSE(info.has_value());
            CHECK(info.error().code == errc::not_found);
        }
        // Aborted writers clean up after themselves: no leftovers, not even invisible ones.
        check_only_whole_blobs(*inner, options->ns, committed, content);
    }
}

TEST_CASE("with any one storage call throwing, a dropped RADOS upload leaves only what remove_incomplete "
          "reclaims" *
          doctest::skip(!ceph_configured()))
{
    auto options = ceph_test_options();
    REQUIRE(options);
    options->stripe_size = faulty_stripe;
    options->window = 2;
    auto inner = make_test_rados_store(*options);
    auto [store, faults] = make_faulty_blob_store(inner);
    const auto content = make_content(150'000, 32);

    std::vector<blob_id> committed;
    attempt clean;
    run(upload_and_read(*store, content, clean));
    REQUIRE(clean.read_back);
    committed.push_back(clean.id);
    const auto calls = faults->operations();

    for (std::size_t n = 1; n <= calls; ++n) {
        CAPTURE(n);
        faults->throw_nth(n);
        attempt a;
        // The exception unwinds the coroutine without abort: the writer is dropped as in a crash.
        CHECK_THROWS_AS(run(upload_and_read(*store, content, a)), std::runtime_error);
        faults->heal();
        if (a.committed)
            committed.push_back(a.id);
        else if (!a.id.empty())
            CHECK_FALSE(run(inner->stat(a.id)).has_value());

        // Writes of the dropped writer may still be landing: reclaim until only whole blobs remain.
        auto deadline = std::chrono::steady_clock::now() + 10s;
        while (ceph_inspector::get().objects(options->ns).size() != 4 * committed.size() &&
               std::chrono::steady_clock::now() < deadline) {
            REQUIRE(run(inner->remove_incomplete(std::chrono::system_clock::now() + 2s)).has_value());
            std::this_thread::sleep_for(20ms);
        }
        check_only_whole_blobs(*inner, options->ns, committed, content);
    }
}
