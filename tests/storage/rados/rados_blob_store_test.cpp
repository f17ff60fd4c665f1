#include "rados_test_env.hpp"
#include "storage/rados/rados_blob_store.hpp"
#include "storage/test_util.hpp"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <csignal>
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <sys/types.h>
#include <thread>

using namespace depot;
using namespace depot::storage;
using namespace depot::storage::testing;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t kib = 1024;
constexpr std::uint64_t stripe = 64 * kib;

struct test_store
{
    rados_options options;
    std::shared_ptr<blob_store> store;

    test_store(std::uint64_t stripe_size, unsigned window)
    {
        auto o = ceph_test_options();
        REQUIRE(o);
        options = *o;
        options.stripe_size = stripe_size;
        options.window = window;
        store = make_test_rados_store(options);
    }

    rados_store_stats stats() const
    {
        auto s = rados_stats(*store);
        REQUIRE(s);
        return *s;
    }

    std::vector<std::string> objects() const { return ceph_inspector::get().objects(options.ns); }
};

asio::awaitable<blob_id> put(blob_store& store, std::string_view content, std::size_t chunk)
{
    auto created = co_await store.create({.size_hint = content.size()});
    REQUIRE(created.has_value());
    for (std::size_t at = 0; at < content.size(); at += chunk) {
        auto written = co_await (*created)->write(bytes_of(content.substr(at, chunk)));
        INFO((written ? std::string() : written.error().message));
        REQUIRE(written.has_value());
    }
    REQUIRE((co_await (*created)->commit()).has_value());
    co_return (*created)->id();
}

/// Stripe reads a ranged read issues, checking the bytes too.
std::uint64_t stripe_reads_for(test_store& t, const blob_id& id, const std::string& content,
                               std::uint64_t offset, std::uint64_t length)
{
    auto before = t.stats().stripe_reads;
    auto got = run(read_all(*t.store, id, offset, length));
    REQUIRE(got.has_value());
    CHECK(*got == content.substr(offset, length));
    return t.stats().stripe_reads - before;
}

/// Waits (briefly) until the namespace holds `n` objects: writes of a dropped writer land asynchronously.
std::vector<std::string> wait_for_objects(const test_store& t, std::size_t n)
{
    auto deadline = std::chrono::steady_clock::now() + 10s;
    auto names = t.objects();
    while (names.size() != n && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(50ms);
        names = t.objects();
    }
    return names;
}

/// Writes 2.5 stripes through a writer that is then dropped without commit or abort, like a crash.
blob_id write_and_drop(test_store& t, const std::string& content)
{
    return run([&]() -> asio::awaitable<blob_id> {
        auto created = co_await t.store->create();
        REQUIRE(created.has_value());
        REQUIRE((co_await (*created)->write(bytes_of(content))).has_value());
        co_return (*created)->id();
    }());
}

} // namespace

TEST_CASE("a blob of 2.5 stripes is a head and three stripe objects" * doctest::skip(!ceph_configured()))
{
    test_store t(stripe, 8);
    const auto content = make_content(2 * stripe + stripe / 2, 7);
    auto id = run(put(*t.store, content, 10'000));

    auto names = t.objects();
    CHECK(names == std::vector<std::string>{id, id + ".00000000", id + ".00000001", id + ".00000002"});
    auto& inspect = ceph_inspector::get();
    CHECK(inspect.size(t.options.ns, id) == 0u);
    CHECK(inspect.size(t.options.ns, id + ".00000000") == stripe);
    CHECK(inspect.size(t.options.ns, id + ".00000001") == stripe);
    CHECK(inspect.size(t.options.ns, id + ".00000002") == stripe / 2);
    CHECK(t.stats().stripe_writes == 3);

    auto info = run(t.store->stat(id));
    REQUIRE(info.has_value());
    CHECK(info->size == content.size());
}

TEST_CASE("ranged reads read only the stripes they overlap" * doctest::skip(!ceph_configured()))
{
    test_store t(stripe, 8);
    const auto content = make_content(2 * stripe + stripe / 2, 8);
    auto id = run(put(*t.store, content, 30'000));

    CHECK(stripe_reads_for(t, id, content, 0, content.size()) == 3);
    CHECK(stripe_reads_for(t, id, content, stripe + 100, 1000) == 1);      // inside stripe 1
    CHECK(stripe_reads_for(t, id, content, stripe - 10, 20) == 2);         // across the 0/1 boundary
    CHECK(stripe_reads_for(t, id, content, 2 * stripe - 1, 2) == 2);       // across the 1/2 boundary
    CHECK(stripe_reads_for(t, id, content, stripe, stripe) == 1);          // exactly stripe 1
    CHECK(stripe_reads_for(t, id, content, 2 * stripe, stripe / 2) == 1);  // exactly the last stripe
    CHECK(stripe_reads_for(t, id, content, stripe / 2, 2 * stripe) == 3);  // all three, partially
    CHECK(stripe_reads_for(t, id, content, content.size() - 1, 100) == 1); // last byte
    CHECK(stripe_reads_for(t, id, content, 12345, 0) == 0);                // empty range
    CHECK(stripe_reads_for(t, id, content, content.size(), 10) == 0);      // at the end

    // Behind the store's back, take away the stripes a range does not need: it still reads.
    auto& inspect = ceph_inspector::get();
    REQUIRE(inspect.remove(t.options.ns, id + ".00000000"));
    REQUIRE(inspect.remove(t.options.ns, id + ".00000002"));
    CHECK(stripe_reads_for(t, id, content, stripe + 5, stripe - 10) == 1);
    // A range that needs a missing stripe fails as an I/O error (the head says the blob is there).
    auto broken = run(read_all(*t.store, id, 0, 10));
    REQUIRE_FALSE(broken.has_value());
    CHECK(broken.error().code == errc::io_error);
}

TEST_CASE("stat and a failed open read the head only" * doctest::skip(!ceph_configured()))
{
    test_store t(stripe, 8);
    auto id = run(put(*t.store, make_content(3 * stripe, 9), 50'000));
    auto before = t.stats();
    REQUIRE(run(t.store->stat(id)).has_value());
    auto past = run(t.store->open(id, 3 * stripe + 1, 1));
    REQUIRE_FALSE(past.has_value());
    CHECK(past.error().code == errc::invalid_range);
    auto after = t.stats();
    CHECK(after.stripe_reads == before.stripe_reads);
    CHECK(after.head_reads == before.head_reads + 2);
}

TEST_CASE("a blob of at most one stripe is its head alone, holding the bytes, written in one operation" *
          doctest::skip(!ceph_configured()))
{
    test_store t(stripe, 8);
    const auto half = make_content(stripe / 2, 30);
    const auto whole = make_content(stripe, 31);
    auto a = run(put(*t.store, half, 1000));
    auto b = run(put(*t.store, whole, stripe));
    auto c = run(put(*t.store, "", 1));
    auto s = t.stats();
    CHECK(s.inline_writes == 3);
    CHECK(s.stripe_writes == 0);
    auto names = t.objects();
    std::vector<std::string> expected{a, b, c};
    std::sort(expected.begin(), expected.end());
    CHECK(names == expected);
    auto& inspect = ceph_inspector::get();
    CHECK(inspect.size(t.options.ns, a) == half.size());
    CHECK(inspect.size(t.options.ns, b) == whole.size());
    CHECK(inspect.size(t.options.ns, c) == 0u);

    CHECK(*run(read_all(*t.store, a)) == half);
    CHECK(*run(read_all(*t.store, b)) == whole);
    CHECK(run(read_all(*t.store, c))->empty());
    // The bytes come with the head read: no stripe read at all.
    const auto head_reads = t.stats().head_reads;
    CHECK(stripe_reads_for(t, b, whole, 100, 5000) == 0);
    CHECK(t.stats().head_reads == head_reads + 1);
    auto info = run(t.store->stat(a));
    REQUIRE(info.has_value());
    CHECK(info->size == half.size());
    auto listed = run(t.store->list("", 100));
    REQUIRE(listed.has_value());
    CHECK(listed->size() == 3);

    // A writer dropped before its first stripe filled has written nothing at all.
    write_and_drop(t, make_content(stripe - 1, 32));
    CHECK(t.objects().size() == 3);

    for (const auto& id : {a, b, c})
        REQUIRE(run(t.store->remove(id)).has_value());
    CHECK(t.objects().empty());
    auto gone = run(t.store->stat(a));
    REQUIRE_FALSE(gone.has_value());
    CHECK(gone.error().code == errc::not_found);
}

TEST_CASE("a dropped writer leaves stripes and a writing head that remove_incomplete reclaims" *
          doctest::skip(!ceph_configured()))
{
    test_store t(stripe, 8);
    const auto content = make_content(2 * stripe + stripe / 2, 10);
    auto id = write_and_drop(t, content);

    // The two full stripes were written; the half one was only buffered and died with the writer.
    auto names = wait_for_objects(t, 3);
    CHECK(names == std::vector<std::string>{id, id + ".00000000", id + ".00000001"});
    auto info = run(t.store->stat(id));
    REQUIRE_FALSE(info.has_value());
    CHECK(info.error().code == errc::not_found);
    auto listed = run(t.store->list("", 100));
    REQUIRE(listed.has_value());
    CHECK(listed->empty());

    auto young = run(t.store->remove_incomplete(std::chrono::system_clock::now() - 1h));
    REQUIRE(young.has_value());
    CHECK(*young == 0);
    CHECK(t.objects().size() == 3);

    auto reclaimed = run(t.store->remove_incomplete(std::chrono::system_clock::now() + 2s));
    REQUIRE(reclaimed.has_value());
    CHECK(*reclaimed == 1);
    CHECK(t.objects().empty());
}

TEST_CASE("stripes whose head is gone are leftovers that remove_incomplete reclaims" *
          doctest::skip(!ceph_configured()))
{
    test_store t(stripe, 8);
    auto kept = run(put(*t.store, make_content(stripe + 1, 11), 20'000));
    // Three full stripes go out once the byte after them arrives; that byte dies with the writer.
    auto id = write_and_drop(t, make_content(3 * stripe + 1, 12));
    wait_for_objects(t, 3 + 4);
    // As if a removal had crashed between the head and the stripes.
    REQUIRE(ceph_inspector::get().remove(t.options.ns, id));

    auto young = run(t.store->remove_incomplete(std::chrono::system_clock::now() - 1h));
    REQUIRE(young.has_value());
    CHECK(*young == 0);
    auto reclaimed = run(t.store->remove_incomplete(std::chrono::system_clock::now() + 2s));
    REQUIRE(reclaimed.has_value());
    CHECK(*reclaimed == 1);
    CHECK(t.objects() == std::vector<std::string>{kept, kept + ".00000000", kept + ".00000001"});
}

TEST_CASE("remove takes the head and every stripe of a committed blob" * doctest::skip(!ceph_configured()))
{
    test_store t(stripe, 2);
    auto id = run(put(*t.store, make_content(5 * stripe + 3, 13), 100'000));
    CHECK(t.objects().size() == 7);
    REQUIRE(run(t.store->remove(id)).has_value());
    CHECK(t.objects().empty());
}

TEST_CASE("abort removes the head and the stripes already written" * doctest::skip(!ceph_configured()))
{
    test_store t(stripe, 3);
    run([&]() -> asio::awaitable<void> {
        auto created = co_await t.store->create();
        REQUIRE(created.has_value());
        auto content = make_content(4 * stripe + 10, 14);
        REQUIRE((co_await (*created)->write(bytes_of(content))).has_value());
        co_await (*created)->abort();
    }());
    CHECK(t.objects().empty());
}

TEST_CASE("writers and readers keep at most `window` stripes in flight, and use the whole window" *
          doctest::skip(!ceph_configured()))
{
    for (unsigned window : {1u, 3u}) {
        CAPTURE(window);
        test_store t(stripe, window);
        const auto content = make_content(16 * stripe, window);
        // One big write: the writer must wait for completions to stay within its window.
        auto id = run(put(*t.store, content, content.size()));
        auto s = t.stats();
        CHECK(s.stripe_writes == 16);
        CHECK(s.peak_writes_in_flight == window);

        // Small writes, too.
        auto small = run(put(*t.store, content, 1000));
        CHECK(t.stats().peak_writes_in_flight == window);

        auto got = run(read_all(*t.store, id));
        REQUIRE(got.has_value());
        CHECK(*got == content);
        s = t.stats();
        CHECK(s.stripe_reads == 16);
        CHECK(s.peak_reads_in_flight == window);

        // A reader that is slower than RADOS still stops at the window.
        run([&]() -> asio::awaitable<void> {
            auto opened = co_await t.store->open(small, 0, content.size());
            REQUIRE(opened.has_value());
            std::string back;
            std::array<std::byte, 4096> buf{};
            for (;;) {
                auto n = co_await (*opened)->read_some(buf);
                REQUIRE(n.has_value());
                if (*n == 0)
                    break;
                back.append(reinterpret_cast<const char*>(buf.data()), *n);
            }
            CHECK(back == content);
        }());
        CHECK(t.stats().peak_reads_in_flight == window);
    }
}

TEST_CASE("concurrent writers share the store's write budget and still write every byte" *
          doctest::skip(!ceph_configured()))
{
    // 4 writers with a window of 8 stripes each would keep up to 32 stripes in flight; the budget allows 3.
    auto o = ceph_test_options();
    REQUIRE(o);
    o->stripe_size = stripe;
    o->window = 8;
    o->write_budget = 3 * stripe;
    auto store = make_test_rados_store(*o);
    std::vector<std::string> contents;
    for (unsigned i = 0; i < 4; ++i)
        contents.push_back(make_content(16 * stripe + 100, 40 + i));
    std::vector<blob_id> ids(contents.size());
    asio::io_context ioc;
    for (std::size_t i = 0; i < contents.size(); ++i)
        asio::co_spawn(
            ioc, [&, i]() -> asio::awaitable<void> { ids[i] = co_await put(*store, contents[i], 5000); },
            [](std::exception_ptr e) {
                if (e)
                    std::rethrow_exception(e);
            });
    ioc.run();
    auto s = rados_stats(*store);
    REQUIRE(s);
    CHECK(s->stripe_writes == 4 * 17);
    CHECK(s->peak_write_bytes <= 3 * stripe);
    CHECK(s->peak_write_bytes >= 2 * stripe);
    CHECK(s->write_budget_waits > 0);
    for (std::size_t i = 0; i < contents.size(); ++i) {
        auto got = run(read_all(*store, ids[i]));
        REQUIRE(got.has_value());
        CHECK(*got == contents[i]);
    }

    // Without a budget only the windows bound the writers.
    o->write_budget = 0;
    auto unbounded = make_test_rados_store(*o);
    run(put(*unbounded, contents[0], contents[0].size()));
    CHECK(rados_stats(*unbounded)->peak_write_bytes == 0);
}

TEST_CASE("missing blobs are not_found for open, stat and remove" * doctest::skip(!ceph_configured()))
{
    test_store t(stripe, 8);
    auto missing = make_random_blob_id();
    auto opened = run(t.store->open(missing, 0, 1));
    REQUIRE_FALSE(opened.has_value());
    CHECK(opened.error().code == errc::not_found);
    auto info = run(t.store->stat(missing));
    REQUIRE_FALSE(info.has_value());
    CHECK(info.error().code == errc::not_found);
    auto removed = run(t.store->remove(missing));
    REQUIRE_FALSE(removed.has_value());
    CHECK(removed.error().code == errc::not_found);
    // A stripe name is not a blob id.
    auto id = run(put(*t.store, "x", 1));
    auto stripe_as_id = run(t.store->stat(id + ".00000000"));
    REQUIRE_FALSE(stripe_as_id.has_value());
    CHECK(stripe_as_id.error().code == errc::not_found);
}

TEST_CASE("connecting to a missing pool or an unreachable cluster throws a clear error" *
          doctest::skip(!ceph_configured()))
{
    auto options = *ceph_test_options();
    options.pool = "depot-no-such-pool";
    try {
        (void)make_rados_blob_store(options);
        FAIL("connected to a missing pool");
    } catch (const std::runtime_error& e) {
        CHECK(std::string(e.what()).find("no such pool") != std::string::npos);
        CHECK(std::string(e.what()).find("depot-no-such-pool") != std::string::npos);
    }

    temp_dir dir;
    auto conf = dir.path / "ceph.conf";
    std::ofstream(conf) << "[global]\nmon host = 127.0.0.1:9\n";
    options = *ceph_test_options();
    options.conf_file = conf.string();
    options.op_timeout = 2s;
    auto started = std::chrono::steady_clock::now();
    try {
        (void)make_rados_blob_store(options);
        FAIL("connected to nothing");
    } catch (const std::runtime_error& e) {
        CHECK(std::string(e.what()).find(conf.string()) != std::string::npos);
    }
    CHECK(std::chrono::steady_clock::now() - started < 15s);
}

namespace {

/// The pid of the OSD of a scripts/ceph-dev cluster (<conf dir>/out/osd.0.pid), for the outage test.
std::optional<pid_t> dev_cluster_osd_pid()
{
    const char* conf = std::getenv("DEPOT_TEST_CEPH_CONF");
    if (!conf)
        return std::nullopt;
    std::ifstream in(std::filesystem::path(conf).parent_path() / "out" / "osd.0.pid");
    pid_t pid = 0;
    if (!(in >> pid) || pid <= 0)
        return std::nullopt;
    return pid;
}

bool pause_osd_enabled()
{
    const char* v = std::getenv("DEPOT_TEST_CEPH_PAUSE_OSD");
    return ceph_configured() && v && std::string(v) == "1";
}

} // namespace

// Opt-in (DEPOT_TEST_CEPH_PAUSE_OSD=1): it freezes the OSD of a scripts/ceph-dev cluster for a few seconds,
// which would disturb anything else using that cluster meanwhile.
TEST_CASE("an OSD that stops answering fails operations as unavailable within the operation timeout" *
          doctest::skip(!pause_osd_enabled()))
{
    auto pid = dev_cluster_osd_pid();
    REQUIRE_MESSAGE(pid, "no out/osd.0.pid next to DEPOT_TEST_CEPH_CONF (not a scripts/ceph-dev cluster?)");
    auto options = *ceph_test_options();
    options.op_timeout = 3s;
    auto store = make_test_rados_store(options);
    auto id = run(put(*store, "before the outage", 100));

    struct resume_osd
    {
        pid_t pid;
        ~resume_osd() { ::kill(pid, SIGCONT); }
    } resume{*pid};
    REQUIRE(::kill(*pid, SIGSTOP) == 0);

    auto started = std::chrono::steady_clock::now();
    auto info = run(store->stat(id));
    REQUIRE_FALSE(info.has_value());
    CHECK(info.error().code == errc::unavailable);
    auto created = run(store->create());
    REQUIRE_FALSE(created.has_value());
    CHECK(created.error().code == errc::unavailable);
    CHECK(std::chrono::steady_clock::now() - started < 10s);

    ::kill(*pid, SIGCONT);
    auto deadline = std::chrono::steady_clock::now() + 30s;
    auto back = run(read_all(*store, id));
    while (!back && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(200ms);
        back = run(read_all(*store, id));
    }
    REQUIRE(back.has_value());
    CHECK(*back == "before the outage");
}
