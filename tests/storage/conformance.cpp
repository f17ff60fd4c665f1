#include "conformance.hpp"

#include "common/hash.hpp"
#include "test_util.hpp"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

namespace depot::storage::testing {
namespace {

using clock = std::chrono::system_clock;
using namespace std::chrono_literals;
using namespace std::string_view_literals;

constexpr std::size_t mib = 1024 * 1024;

/// Writes `content` in spans of `chunk` bytes and commits; REQUIREs success.
asio::awaitable<blob_id> put(blob_store& store, std::string_view content, std::size_t chunk = 256 * 1024)
{
    auto created = co_await store.create({.size_hint = content.size()});
    REQUIRE(created.has_value());
    auto& writer = **created;
    for (std::size_t at = 0; at < content.size(); at += chunk) {
        auto written = co_await writer.write(bytes_of(content.substr(at, chunk)));
        REQUIRE(written.has_value());
    }
    CHECK(writer.size() == content.size());
    auto committed = co_await writer.commit();
    REQUIRE(committed.has_value());
    co_return writer.id();
}

/// read_all, REQUIREing success.
asio::awaitable<std::string> get(blob_store& store, const blob_id& id, std::uint64_t offset = 0,
                                 std::uint64_t length = UINT64_MAX)
{
    auto r = co_await read_all(store, id, offset, length);
    REQUIRE(r.has_value());
    co_return std::move(*r);
}

/// Every committed blob, following `after` through pages of `page` entries.
asio::awaitable<std::vector<blob_listing_entry>> list_everything(blob_store& store, std::size_t page = 1000)
{
    std::vector<blob_listing_entry> all;
    blob_id after;
    for (;;) {
        auto r = co_await store.list(after, page);
        REQUIRE(r.has_value());
        CHECK(r->size() <= page);
        if (r->empty())
            break;
        after = r->back().id;
        for (auto& e : *r)
            all.push_back(std::move(e));
    }
    co_return all;
}

std::vector<blob_id> ids_of(const std::vector<blob_listing_entry>& entries)
{
    std::vector<blob_id> ids;
    for (const auto& e : entries)
        ids.push_back(e.id);
    return ids;
}

std::string hex_sha256(std::string_view s)
{
    return to_hex(sha256(s));
}

asio::awaitable<void> committed_blob_reads_back(blob_store& store)
{
    auto before = clock::now();
    const auto content = make_content(100'000, 1);
    auto id = co_await put(store, content, 30'000);
    auto after = clock::now();
    CHECK(is_valid_blob_id(id));
    CHECK(co_await get(store, id) == content);

    auto info = co_await store.stat(id);
    REQUIRE(info.has_value());
    CHECK(info->size == content.size());
    // File systems keep coarse timestamps; allow for that, not for a wrong clock.
    CHECK(info->modified >= before - 2s);
    CHECK(info->modified <= after + 2s);
}

asio::awaitable<void> ranged_reads_clamp_to_the_end(blob_store& store)
{
    const auto content = make_content(10'000, 2);
    auto id = co_await put(store, content);
    CHECK(co_await get(store, id, 0, 100) == content.substr(0, 100));
    CHECK(co_await get(store, id, 4321, 1234) == content.substr(4321, 1234));
    CHECK(co_await get(store, id, 9000, 1000) == content.substr(9000));
    CHECK(co_await get(store, id, 9000) == content.substr(9000));
    CHECK(co_await get(store, id, 9999, 50) == content.substr(9999));
    CHECK(co_await get(store, id, 5000, 0) == ""sv);

    // Small caller buffers get the range piece by piece, and 0 only once it is exhausted.
    auto opened = co_await store.open(id, 100, 20);
    REQUIRE(opened.has_value());
    std::string got;
    std::array<std::byte, 7> buf{};
    for (;;) {
        auto n = co_await (*opened)->read_some(buf);
        REQUIRE(n.has_value());
        CHECK(*n <= buf.size());
        if (*n == 0)
            break;
        got.append(reinterpret_cast<const char*>(buf.data()), *n);
    }
    CHECK(got == content.substr(100, 20));
    auto again = co_await (*opened)->read_some(buf);
    REQUIRE(again.has_value());
    CHECK(*again == 0);
}

asio::awaitable<void> reads_at_or_past_the_end(blob_store& store)
{
    const auto content = make_content(1000, 3);
    auto id = co_await put(store, content);
    CHECK(co_await get(store, id, 1000) == ""sv);
    CHECK(co_await get(store, id, 1000, 10) == ""sv);
    auto past = co_await store.open(id, 1001, 10);
    REQUIRE_FALSE(past.has_value());
    CHECK(past.error().code == errc::invalid_range);
    auto far = co_await store.open(id, UINT64_MAX, 1);
    REQUIRE_FALSE(far.has_value());
    CHECK(far.error().code == errc::invalid_range);
}

asio::awaitable<void> empty_blob(blob_store& store)
{
    auto created = co_await store.create();
    REQUIRE(created.has_value());
    auto& writer = **created;
    CHECK(writer.size() == 0);
    REQUIRE((co_await writer.commit()).has_value());
    CHECK(co_await get(store, writer.id()) == ""sv);
    auto info = co_await store.stat(writer.id());
    REQUIRE(info.has_value());
    CHECK(info->size == 0);
    auto past = co_await store.open(writer.id(), 1, 1);
    REQUIRE_FALSE(past.has_value());
    CHECK(past.error().code == errc::invalid_range);
    auto listed = co_await list_everything(store);
    REQUIRE(listed.size() == 1);
    CHECK(listed[0].id == writer.id());
    CHECK(listed[0].info.size == 0);
}

asio::awaitable<void> large_blob(blob_store& store)
{
    const auto content = make_content(20 * mib, 4);

    auto whole = co_await put(store, content, mib);
    auto read = co_await get(store, whole);
    CHECK(read.size() == content.size());
    CHECK(hex_sha256(read) == hex_sha256(content));

    // Odd sizes straddle any internal buffer or stripe boundary a store may have.
    auto created = co_await store.create();
    REQUIRE(created.has_value());
    auto& writer = **created;
    const std::size_t sizes[] = {1, 4093, 65537, mib + 7, 3, 777'777, 2 * mib - 1, 131'071};
    std::size_t at = 0;
    for (std::size_t i = 0; at < content.size(); ++i) {
        auto n = std::min(sizes[i % std::size(sizes)], content.size() - at);
        REQUIRE((co_await writer.write(bytes_of(std::string_view(content).substr(at, n)))).has_value());
        at += n;
        CHECK(writer.size() == at);
    }
    REQUIRE((co_await writer.commit()).has_value());
    auto odd = co_await get(store, writer.id());
    CHECK(odd.size() == content.size());
    CHECK(hex_sha256(odd) == hex_sha256(content));
    auto info = co_await store.stat(writer.id());
    REQUIRE(info.has_value());
    CHECK(info->size == content.size());

    const std::vector<std::uint64_t> offsets{0, mib - 1, 10 * mib + 12345, 20 * mib - 5};
    for (auto offset : offsets) {
        auto part = co_await get(store, writer.id(), offset, mib + 2);
        CHECK(part == content.substr(offset, mib + 2));
    }
}

/// Reads a range through read_view, checking each view is still intact when the next call is made (the
/// contract: valid until then), alternating with read_some when `mixed`.
asio::awaitable<std::string> get_viewed(blob_store& store, const blob_id& id, std::uint64_t offset,
                                        std::uint64_t length, std::size_t max, bool mixed)
{
    auto opened = co_await store.open(id, offset, length);
    REQUIRE(opened.has_value());
    auto& reader = **opened;
    std::string got;
    std::string held; // a copy of the last view, compared with the view's memory before the next call
    std::span<const std::byte> last;
    std::vector<std::byte> buf(max);
    for (int call = 0;; ++call) {
        CHECK(std::string_view(reinterpret_cast<const char*>(last.data()), last.size()) == held);
        if (mixed && call % 2 == 1) {
            auto n = co_await reader.read_some(buf);
            REQUIRE(n.has_value());
            last = {};
            held.clear();
            if (*n == 0)
                break;
            got.append(reinterpret_cast<const char*>(buf.data()), *n);
            continue;
        }
        auto v = co_await reader.read_view(max);
        REQUIRE(v.has_value());
        CHECK(v->size() <= max);
        if (v->empty())
            break;
        last = *v;
        held.assign(reinterpret_cast<const char*>(v->data()), v->size());
        got += held;
    }
    auto again = co_await reader.read_view(max);
    REQUIRE(again.has_value());
    CHECK(again->empty());
    co_return got;
}

asio::awaitable<void> views_read_what_read_some_reads(blob_store& store)
{
    const auto content = make_content(9 * mib + 4321, 11);
    auto id = co_await put(store, content, mib);
    auto whole = co_await get_viewed(store, id, 0, content.size(), mib, false);
    CHECK(whole.size() == content.size());
    CHECK(hex_sha256(whole) == hex_sha256(content));
    CHECK(co_await get_viewed(store, id, 0, content.size(), 4 * mib, true) == content);
    CHECK(co_await get_viewed(store, id, mib - 3, 2 * mib + 10, 65536, false) ==
          content.substr(mib - 3, 2 * mib + 10));
    CHECK(co_await get_viewed(store, id, 7 * mib, UINT64_MAX, 1000, true) == content.substr(7 * mib));
    // A blob of one small piece (stores may keep it apart from their striped layout).
    const auto small = make_content(4096, 12);
    auto small_id = co_await put(store, small);
    CHECK(co_await get_viewed(store, small_id, 0, UINT64_MAX, mib, false) == small);
    CHECK(co_await get_viewed(store, small_id, 100, 50, 7, true) == small.substr(100, 50));
}

asio::awaitable<void> uncommitted_blob_is_invisible(blob_store& store)
{
    auto created = co_await store.create();
    REQUIRE(created.has_value());
    auto& writer = **created;
    REQUIRE((co_await writer.write(bytes_of("not yet"))).has_value());

    auto opened = co_await store.open(writer.id(), 0, 10);
    REQUIRE_FALSE(opened.has_value());
    CHECK(opened.error().code == errc::not_found);
    auto info = co_await store.stat(writer.id());
    REQUIRE_FALSE(info.has_value());
    CHECK(info.error().code == errc::not_found);
    CHECK((co_await list_everything(store)).empty());
    auto removed = co_await store.remove(writer.id());
    REQUIRE_FALSE(removed.has_value());
    CHECK(removed.error().code == errc::not_found);

    REQUIRE((co_await writer.commit()).has_value());
    CHECK(co_await get(store, writer.id()) == "not yet"sv);
}

asio::awaitable<void> abort_is_idempotent(blob_store& store)
{
    auto created = co_await store.create();
    REQUIRE(created.has_value());
    auto& writer = **created;
    REQUIRE((co_await writer.write(bytes_of("discard me"))).has_value());
    co_await writer.abort();
    co_await writer.abort();
    auto info = co_await store.stat(writer.id());
    REQUIRE_FALSE(info.has_value());
    CHECK(info.error().code == errc::not_found);
    CHECK((co_await list_everything(store)).empty());

    // Abort after a successful commit changes nothing.
    auto kept = co_await store.create();
    REQUIRE(kept.has_value());
    REQUIRE((co_await (*kept)->write(bytes_of("keep me"))).has_value());
    REQUIRE((co_await (*kept)->commit()).has_value());
    co_await (*kept)->abort();
    CHECK(co_await get(store, (*kept)->id()) == "keep me"sv);
}

asio::awaitable<void> destroyed_writer_is_invisible(blob_store& store)
{
    blob_id id;
    {
        auto created = co_await store.create();
        REQUIRE(created.has_value());
        id = (*created)->id();
        REQUIRE((co_await (*created)->write(bytes_of("never committed"))).has_value());
    }
    auto opened = co_await store.open(id, 0, 100);
    REQUIRE_FALSE(opened.has_value());
    CHECK(opened.error().code == errc::not_found);
    auto info = co_await store.stat(id);
    REQUIRE_FALSE(info.has_value());
    CHECK(info.error().code == errc::not_found);
    CHECK((co_await list_everything(store)).empty());
}

asio::awaitable<void> writer_misuse_throws(blob_store& store)
{
    auto committed = co_await store.create();
    REQUIRE(committed.has_value());
    REQUIRE((co_await (*committed)->commit()).has_value());
    bool threw = false;
    try {
        (void)co_await (*committed)->write(bytes_of("late"));
    } catch (const std::logic_error&) {
        threw = true;
    }
    CHECK(threw);
    threw = false;
    try {
        (void)co_await (*committed)->commit();
    } catch (const std::logic_error&) {
        threw = true;
    }
    CHECK(threw);

    auto aborted = co_await store.create();
    REQUIRE(aborted.has_value());
    co_await (*aborted)->abort();
    threw = false;
    try {
        (void)co_await (*aborted)->commit();
    } catch (const std::logic_error&) {
        threw = true;
    }
    CHECK(threw);
}

asio::awaitable<void> removed_blob_is_gone(blob_store& store)
{
    auto id = co_await put(store, "short-lived");
    auto other = co_await put(store, "stays");
    REQUIRE((co_await store.remove(id)).has_value());
    auto opened = co_await store.open(id, 0, 1);
    REQUIRE_FALSE(opened.has_value());
    CHECK(opened.error().code == errc::not_found);
    auto info = co_await store.stat(id);
    REQUIRE_FALSE(info.has_value());
    CHECK(info.error().code == errc::not_found);
    auto again = co_await store.remove(id);
    REQUIRE_FALSE(again.has_value());
    CHECK(again.error().code == errc::not_found);
    auto listed = co_await list_everything(store);
    CHECK(ids_of(listed) == std::vector<blob_id>{other});
    CHECK(co_await get(store, other) == "stays"sv);
}

asio::awaitable<void> unknown_ids_are_not_found(blob_store& store)
{
    auto id = co_await put(store, "x");
    auto sibling = id;
    sibling.back() = sibling.back() == '0' ? '1' : '0';
    // Named, not a braced list: GCC 12 mishandles braced temporaries that live across co_await.
    const std::vector<blob_id> bad_ids{
        sibling,          blob_id("0"), blob_id(), blob_id("../../etc/passwd"), "ABCDEF",
        blob_id(65, 'a'), id + "/",     "/" + id,  id.substr(0, 4) + "/.."};
    for (const auto& bad : bad_ids) {
        CAPTURE(bad);
        auto opened = co_await store.open(bad, 0, 1);
        REQUIRE_FALSE(opened.has_value());
        CHECK(opened.error().code == errc::not_found);
        auto info = co_await store.stat(bad);
        REQUIRE_FALSE(info.has_value());
        CHECK(info.error().code == errc::not_found);
        auto removed = co_await store.remove(bad);
        REQUIRE_FALSE(removed.has_value());
        CHECK(removed.error().code == errc::not_found);
    }
    CHECK(co_await get(store, id) == "x"sv);
}

asio::awaitable<void> list_orders_and_pages(blob_store& store)
{
    std::map<blob_id, std::size_t> sizes;
    for (std::size_t i = 0; i < 40; ++i)
        sizes[co_await put(store, make_content(i * 3, i))] = i * 3;
    std::vector<blob_id> expected;
    for (const auto& [id, size] : sizes)
        expected.push_back(id);

    auto all = co_await store.list("", 1000);
    REQUIRE(all.has_value());
    CHECK(ids_of(*all) == expected);
    for (const auto& e : *all)
        CHECK(e.info.size == sizes[e.id]);

    const std::vector<std::size_t> page_sizes{1, 7, 40, 41};
    for (auto page : page_sizes) {
        CAPTURE(page);
        CHECK(ids_of(co_await list_everything(store, page)) == expected);
    }

    auto none = co_await store.list("", 0);
    REQUIRE(none.has_value());
    CHECK(none->empty());
    auto after_last = co_await store.list(expected.back(), 10);
    REQUIRE(after_last.has_value());
    CHECK(after_last->empty());
    auto past_everything = co_await store.list("zzzz", 10);
    REQUIRE(past_everything.has_value());
    CHECK(past_everything->empty());

    // `after` need not be an existing id: anything sorts somewhere among the ids.
    const std::vector<blob_id> afters{expected[10],
                                      expected[10].substr(0, 1),
                                      expected[10].substr(0, 3),
                                      expected[10].substr(0, 5) + "zz",
                                      "0",
                                      "8"};
    for (const auto& after : afters) {
        CAPTURE(after);
        std::vector<blob_id> want;
        std::copy_if(expected.begin(), expected.end(), std::back_inserter(want),
                     [&](const auto& id) { return id > after; });
        want.resize(std::min<std::size_t>(want.size(), 5));
        auto page = co_await store.list(after, 5);
        REQUIRE(page.has_value());
        CHECK(ids_of(*page) == want);
    }

    // Removed blobs leave the listing.
    REQUIRE((co_await store.remove(expected[3])).has_value());
    expected.erase(expected.begin() + 3);
    CHECK(ids_of(co_await list_everything(store, 6)) == expected);
}

asio::awaitable<void> remove_incomplete_spares_committed(blob_store& store)
{
    auto kept = co_await put(store, "committed before");

    auto young = co_await store.create();
    REQUIRE(young.has_value());
    REQUIRE((co_await (*young)->write(bytes_of("young"))).has_value());
    auto none = co_await store.remove_incomplete(clock::now() - 1h);
    REQUIRE(none.has_value());
    CHECK(*none == 0);
    REQUIRE((co_await (*young)->commit()).has_value());

    auto abandoned = co_await store.create();
    REQUIRE(abandoned.has_value());
    REQUIRE((co_await (*abandoned)->write(bytes_of("abandoned"))).has_value());
    // A cutoff in the future makes every current leftover old enough, whatever the timestamp granularity.
    auto reclaimed = co_await store.remove_incomplete(clock::now() + 2s);
    REQUIRE(reclaimed.has_value());

    auto late = co_await (*abandoned)->commit();
    if (late) {
        // A store may keep a small write entirely in memory until commit (RADOS: a blob of at most one
        // stripe is written whole, with its head, in one operation). Then there was nothing to reclaim, and
        // the late commit makes the whole blob, never a partial one.
        CHECK(*reclaimed == 0);
        CHECK(co_await get(store, (*abandoned)->id()) == "abandoned"sv);
        REQUIRE((co_await store.remove((*abandoned)->id())).has_value());
    } else {
        // Its leftovers are gone, so it can no longer become a blob.
        CHECK(*reclaimed >= 1);
        co_await (*abandoned)->abort();
        auto info = co_await store.stat((*abandoned)->id());
        REQUIRE_FALSE(info.has_value());
        CHECK(info.error().code == errc::not_found);
    }

    CHECK(co_await get(store, kept) == "committed before"sv);
    CHECK(co_await get(store, (*young)->id()) == "young"sv);
    std::vector<blob_id> expected{kept, (*young)->id()};
    std::sort(expected.begin(), expected.end());
    CHECK(ids_of(co_await list_everything(store)) == expected);

    auto nothing_left = co_await store.remove_incomplete(clock::now() + 2s);
    REQUIRE(nothing_left.has_value());
    CHECK(*nothing_left == 0);
}

asio::awaitable<void> ids_are_unique(blob_store& store)
{
    std::set<blob_id> seen;
    for (int i = 0; i < 200; ++i) {
        auto created = co_await store.create();
        REQUIRE(created.has_value());
        const auto& id = (*created)->id();
        CHECK(is_valid_blob_id(id));
        CHECK(seen.insert(id).second);
        co_await (*created)->abort();
    }
}

/// 50 coroutines on 4 threads each write, verify, read each other's blobs and remove some of their own.
void concurrent_writers_and_readers(blob_store& store)
{
    constexpr int workers = 50;
    std::mutex mu;
    std::vector<std::string> failures;
    std::map<blob_id, std::string> published; // blobs that stay, with their content
    std::set<blob_id> all_ids;
    auto fail = [&](std::string what) {
        std::lock_guard lock(mu);
        failures.push_back(std::move(what));
    };

    auto worker = [&](int i) -> asio::awaitable<void> {
        const auto content = make_content(static_cast<std::size_t>(i) * 7919 % 300'000 + i, 1000 + i);
        const std::size_t chunk = static_cast<std::size_t>(i % 5 + 1) * 13'001;
        auto created = co_await store.create({.size_hint = i % 2 ? content.size() : 0});
        if (!created)
            co_return fail("create: " + created.error().message);
        auto& writer = **created;
        {
            std::lock_guard lock(mu);
            if (!all_ids.insert(writer.id()).second)
                failures.push_back("duplicate id " + writer.id());
        }
        for (std::size_t at = 0; at < content.size(); at += chunk) {
            auto w = co_await writer.write(bytes_of(std::string_view(content).substr(at, chunk)));
            if (!w)
                co_return fail("write: " + w.error().message);
        }
        if (auto c = co_await writer.commit(); !c)
            co_return fail("commit: " + c.error().message);
        auto back = co_await read_all(store, writer.id());
        if (!back || *back != content)
            co_return fail("read back of " + writer.id());
        auto mid = co_await read_all(store, writer.id(), content.size() / 3, 1000);
        if (!mid || *mid != content.substr(content.size() / 3, 1000))
            co_return fail("ranged read of " + writer.id());

        // Read a blob some other worker published.
        std::optional<std::pair<blob_id, std::string>> other;
        {
            std::lock_guard lock(mu);
            if (!published.empty())
                other = *std::next(published.begin(),
                                   static_cast<long>(static_cast<std::size_t>(i) % published.size()));
        }
        if (other) {
            auto theirs = co_await read_all(store, other->first);
            if (!theirs || *theirs != other->second)
                co_return fail("read of another worker's blob " + other->first);
        }

        if (i % 3 == 0) {
            if (auto r = co_await store.remove(writer.id()); !r)
                co_return fail("remove: " + r.error().message);
            auto gone = co_await store.stat(writer.id());
            if (gone || gone.error().code != errc::not_found)
                co_return fail("removed blob still there: " + writer.id());
        } else {
            std::lock_guard lock(mu);
            published.emplace(writer.id(), content);
        }
    };

    asio::io_context ioc(4);
    for (int i = 0; i < workers; ++i)
        asio::co_spawn(ioc, worker(i), [&, i](std::exception_ptr e) {
            if (e)
                fail("worker " + std::to_string(i) + " threw");
        });
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] { ioc.run(); });
    for (auto& t : threads)
        t.join();

    for (const auto& f : failures)
        FAIL_CHECK(f);
    CHECK(all_ids.size() == workers);
    auto listed = run(list_everything(store, 9));
    std::vector<blob_id> expected;
    for (const auto& [id, content] : published)
        expected.push_back(id);
    CHECK(ids_of(listed) == expected);
    for (const auto& e : listed)
        CHECK(e.info.size == published[e.id].size());
}

struct check
{
    const char* name;
    asio::awaitable<void> (*run)(blob_store&);
};

const check checks[] = {
    {"a committed blob reads back whole and stat reports its size and commit time",
     committed_blob_reads_back},
    {"ranged reads cover the start, the middle and the end, and clamp a length past the end",
     ranged_reads_clamp_to_the_end},
    {"a read starting at the end is empty and one starting past it is invalid_range",
     reads_at_or_past_the_end},
    {"an empty blob commits, reads back empty and is listed with size zero", empty_blob},
    {"a 20 MiB blob written in 1 MiB spans and in odd-sized spans reads back intact", large_blob},
    {"read_view returns the bytes read_some does, each view intact until the next call, mixed or not",
     views_read_what_read_some_reads},
    {"an uncommitted blob is invisible to open, stat, remove and list until it commits",
     uncommitted_blob_is_invisible},
    {"abort discards the blob, is idempotent and changes nothing after commit", abort_is_idempotent},
    {"a writer destroyed without commit leaves no visible blob", destroyed_writer_is_invisible},
    {"writing or committing after commit or abort throws logic_error", writer_misuse_throws},
    {"a removed blob is not_found and removing it again is not_found", removed_blob_is_gone},
    {"unknown and malformed ids are not_found for open, stat and remove", unknown_ids_are_not_found},
    {"list returns ids in ascending order and pages with after and limit", list_orders_and_pages},
    {"remove_incomplete reclaims abandoned writers but never committed blobs or young writers",
     remove_incomplete_spares_committed},
    {"created ids are unique and well-formed", ids_are_unique},
};

} // namespace

void run_conformance(const store_factory& factory)
{
    auto store = factory();
    if (!store) {
        MESSAGE("store not configured in this environment; conformance suite skipped");
        return;
    }
    for (const auto& c : checks) {
        SUBCASE(c.name)
        {
            run(c.run(*store));
        }
    }
    SUBCASE("50 concurrent writers and readers on 4 threads see only their own and committed data")
    {
        concurrent_writers_and_readers(*store);
    }
}

} // namespace depot::storage::testing
