// S3 versioning in the object and multipart services on a real PostgreSQL: versions, delete markers,
// permanent deletion with its blob references, 'null' versions, ListObjectVersions pages, concurrent
// writers of one key, and the versions snapshots keep.
#include "integration/test_db.hpp"
#include "registry/repo/audit.hpp"
#include "registry/repo/bucket_repository.hpp"
#include "registry/repo/identity_repository.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/repo/versions.hpp"
#include "registry/service/multipart_service.hpp"
#include "registry/service/object_service.hpp"
#include "registry/service/snapshot_service.hpp"
#include "storage/memory/memory_blob_store.hpp"
#include "test_content.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <cstring>
#include <doctest/doctest.h>
#include <set>

using namespace depot;
namespace asio = boost::asio;
using registry::versioning_mode;

using test::content;
using test::string_source;

namespace {

struct versioning_fixture
{
    test::test_database db{{.migrate = true}};
    std::unique_ptr<storage::blob_store> store = storage::make_memory_blob_store();
    std::shared_ptr<pg::pool> pool;
    std::unique_ptr<registry::object_service> objects;
    std::unique_ptr<registry::multipart_service> multipart;
    registry::bucket bucket;

    asio::awaitable<void> start()
    {
        auto executor = co_await asio::this_coro::executor;
        pg::pool_options options{.conninfo = db.url()};
        pool = pg::make_pool(executor, options);
        objects = std::make_unique<registry::object_service>(*pool, *store);
        multipart = std::make_unique<registry::multipart_service>(
            *pool, *store, registry::multipart_limits{.min_part_size = 1000});
        registry::identity_repository ids(*pool, std::string(32, 'k'));
        registry::user alice{.id = "alice", .display_name = "Alice"};
        REQUIRE(co_await ids.create_user(registry::system_audit_context(), alice));
        registry::bucket_repository buckets(*pool);
        auto b = co_await buckets.create(registry::system_audit_context(), "models", "alice", "us-east-1");
        REQUIRE(b);
        bucket = *b;
    }

    asio::awaitable<void> stop()
    {
        objects.reset();
        multipart.reset();
        pool.reset();
        co_return;
    }

    asio::awaitable<void> set(versioning_mode mode)
    {
        REQUIRE(co_await objects->set_versioning(registry::system_audit_context(), bucket.id, mode));
    }

    asio::awaitable<registry::object_version> put(std::string key, std::string data)
    {
        string_source body(data);
        registry::put_object_request request{.target = &bucket,
                                             .key = std::move(key),
                                             .owner_id = "alice",
                                             .content_length = data.size(),
                                             .body = &body};
        auto v = co_await objects->put_object(registry::system_audit_context(), std::move(request));
        REQUIRE(v);
        co_return *v;
    }

    /// The bytes of a version (the current one without id); REQUIREs that it exists and is no marker.
    asio::awaitable<std::string> read(std::string key, std::optional<std::string> version_id = std::nullopt)
    {
        auto h = co_await objects->open_version(bucket.id, key, version_id);
        REQUIRE(h);
        REQUIRE_FALSE(h->version.is_delete_marker);
        auto src = objects->read(*h, 0, h->version.size);
        std::string out;
        std::vector<std::byte> buf(65536);
        for (;;) {
            auto n = co_await src->read_some(buf);
            REQUIRE(n);
            if (*n == 0)
                co_return out;
            out.append(reinterpret_cast<const char*>(buf.data()), *n);
        }
    }

    asio::awaitable<registry::delete_outcome> remove(std::string key,
                                                     std::optional<std::string> version_id = std::nullopt)
    {
        registry::delete_request request{
            .bucket_id = bucket.id, .key = std::move(key), .version_id = version_id};
        auto out = co_await objects->remove(registry::system_audit_context(), std::move(request));
        REQUIRE(out);
        co_return *out;
    }

    asio::awaitable<std::int64_t> scalar(std::string query)
    {
        auto c = co_await pool->acquire();
        auto rs = co_await registry::sql(*c, query);
        co_return rs[0].i64(0);
    }

    asio::awaitable<std::size_t> stored_blobs()
    {
        auto l = co_await store->list("", 100000);
        REQUIRE(l);
        co_return l->size();
    }

    /// Every blob row's refcount equals the references that rows hold on it.
    asio::awaitable<bool> refcounts_consistent()
    {
        auto bad = co_await scalar("SELECT count(*) FROM blobs b WHERE refcount <> "
                                   "(SELECT count(*) FROM object_segments s WHERE s.blob_id = b.id) + "
                                   "(SELECT count(*) FROM multipart_part_segments s WHERE s.blob_id = b.id)");
        co_return bad == 0;
    }

    asio::awaitable<registry::versions_page> versions(std::string prefix = {}, std::string delimiter = {},
                                                      std::string key_marker = {},
                                                      std::string version_id_marker = {},
                                                      std::size_t max = 1000)
    {
        registry::list_versions_request request{.bucket_id = bucket.id,
                                                .prefix = std::move(prefix),
                                                .delimiter = std::move(delimiter),
                                                .key_marker = std::move(key_marker),
                                                .version_id_marker = std::move(version_id_marker),
                                                .max_keys = max};
        auto page = co_await objects->list_versions(std::move(request));
        REQUIRE(page);
        co_return *page;
    }

    /// ListObjects shows exactly `key` (a named vector: GCC 12 and brace-initialized temporaries in
    /// co_await).
    asio::awaitable<bool> lists_only(std::string key)
    {
        const std::vector<std::string> expected(1, key);
        co_return co_await listed_keys() == expected;
    }

    asio::awaitable<std::vector<std::string>> listed_keys()
    {
        registry::list_request request{.bucket_id = bucket.id};
        auto page = co_await objects->list(std::move(request));
        REQUIRE(page);
        std::vector<std::string> keys;
        for (const auto& e : page->contents)
            keys.push_back(e.key);
        co_return keys;
    }
};

template <class F>
void with_versioning_fixture(F body)
{
    test::run([&]() -> asio::awaitable<void> {
        versioning_fixture f;
        co_await f.start();
        co_await body(f);
        co_await f.stop();
    }());
}

/// One writer of the concurrency test: every fourth deletes (a delete marker), the others put.
asio::awaitable<void> write_hot(versioning_fixture& f, int i, int& finished)
{
    if (i % 4 == 3)
        co_await f.remove("hot");
    else
        co_await f.put("hot", content(50, static_cast<char>('a' + i)));
    ++finished;
}

} // namespace

TEST_CASE("version ids sort by creation, are URL-safe, and only issued ids and null are valid")
{
    auto a = registry::make_version_id(41), b = registry::make_version_id(42);
    CHECK(a.size() == 32);
    CHECK(a < b);
    CHECK(registry::is_valid_version_id(a));
    CHECK(registry::seq_of_version_id(b) == 42);
    CHECK(registry::is_valid_version_id("null"));
    CHECK_FALSE(registry::is_valid_version_id(""));
    CHECK_FALSE(registry::is_valid_version_id("NULL"));
    CHECK_FALSE(registry::is_valid_version_id(std::string(32, 'g')));
    CHECK_FALSE(registry::is_valid_version_id(std::string(32, '0')));
    CHECK_FALSE(registry::is_valid_version_id(a.substr(1)));
}

TEST_CASE("a never-versioned bucket keeps one null version per key and drops the replaced blob")
{
    with_versioning_fixture([](versioning_fixture& f) -> asio::awaitable<void> {
        auto v1 = co_await f.put("k", content(100, 'a'));
        auto v2 = co_await f.put("k", content(100, 'b'));
        CHECK(v1.version_id == "null");
        CHECK(v2.version_id == "null");
        CHECK(co_await f.scalar("SELECT count(*) FROM object_versions") == 1);
        CHECK(co_await f.stored_blobs() == 1);
        auto gone = co_await f.remove("k");
        CHECK(gone.version_id.empty());
        CHECK_FALSE(gone.delete_marker);
        CHECK(co_await f.scalar("SELECT count(*) FROM object_versions") == 0);
        CHECK(co_await f.stored_blobs() == 0);
    });
}

TEST_CASE("with versioning enabled every put adds a version that stays readable by its id")
{
    with_versioning_fixture([](versioning_fixture& f) -> asio::awaitable<void> {
        auto before = co_await f.put("k", content(100, '0')); // written before versioning: the null version
        co_await f.set(versioning_mode::enabled);
        std::vector<registry::object_version> vs;
        for (char seed : {'a', 'b', 'c'})
            vs.push_back(co_await f.put("k", content(100, seed)));
        std::set<std::string> ids;
        for (const auto& v : vs) {
            CHECK(v.version_id != "null");
            ids.insert(v.version_id);
        }
        CHECK(ids.size() == 3);
        CHECK(co_await f.read("k") == content(100, 'c'));
        CHECK(co_await f.read("k", vs[0].version_id) == content(100, 'a'));
        CHECK(co_await f.read("k", std::string("null")) == content(100, '0'));
        CHECK(before.version_id == "null");
        CHECK(co_await f.stored_blobs() == 4);
        CHECK(co_await f.scalar("SELECT count(*) FROM object_versions WHERE superseded_seq IS NULL") == 1);
        CHECK(co_await f.refcounts_consistent());
        CHECK(co_await f.lists_only("k"));

        auto page = co_await f.versions();
        REQUIRE(page.entries.size() == 4);
        CHECK(page.entries[0].version_id == vs[2].version_id);
        CHECK(page.entries[0].is_latest);
        CHECK(page.entries[1].version_id == vs[1].version_id);
        CHECK_FALSE(page.entries[1].is_latest);
        CHECK(page.entries[3].version_id == "null");
        CHECK_FALSE(page.truncated);

        auto missing = co_await f.objects->open_version(f.bucket.id, "k", registry::make_version_id(999999));
        REQUIRE_FALSE(missing);
        CHECK(missing.error().code == errc::no_such_version);
    });
}

TEST_CASE("a delete marker hides the key, keeps every blob, and deleting it brings the key back")
{
    with_versioning_fixture([](versioning_fixture& f) -> asio::awaitable<void> {
        co_await f.set(versioning_mode::enabled);
        auto v1 = co_await f.put("k", content(100, 'a'));
        auto v2 = co_await f.put("k", content(100, 'b'));
        auto marker = co_await f.remove("k");
        CHECK(marker.delete_marker);
        CHECK(registry::is_valid_version_id(marker.version_id));
        CHECK(marker.version_id > v2.version_id);
        auto hidden = co_await f.objects->open_object(f.bucket.id, "k");
        REQUIRE_FALSE(hidden);
        CHECK(hidden.error().code == errc::no_such_key);
        auto current = co_await f.objects->open_version(f.bucket.id, "k", std::nullopt);
        REQUIRE(current);
        CHECK(current->version.is_delete_marker);
        CHECK(current->version.version_id == marker.version_id);
        CHECK((co_await f.listed_keys()).empty());
        CHECK(co_await f.stored_blobs() == 2);
        CHECK(co_await f.read("k", v1.version_id) == content(100, 'a'));

        // A second plain delete stacks another marker, as S3 does.
        auto second = co_await f.remove("k");
        CHECK(second.delete_marker);
        CHECK(co_await f.scalar("SELECT count(*) FROM object_versions WHERE is_delete_marker") == 2);

        auto dropped = co_await f.remove("k", second.version_id);
        CHECK(dropped.delete_marker);
        CHECK(dropped.version_id == second.version_id);
        dropped = co_await f.remove("k", marker.version_id);
        CHECK(dropped.delete_marker);
        CHECK(co_await f.read("k") == content(100, 'b'));
        CHECK(co_await f.lists_only("k"));
        CHECK(co_await f.stored_blobs() == 2);
    });
}

TEST_CASE("deleting versions permanently drops their references and the current one falls back")
{
    with_versioning_fixture([](versioning_fixture& f) -> asio::awaitable<void> {
        co_await f.set(versioning_mode::enabled);
        auto v1 = co_await f.put("k", content(100, 'a'));
        auto v2 = co_await f.put("k", content(100, 'b'));
        auto v3 = co_await f.put("k", content(100, 'a')); // same content as v1: one blob, two references
        CHECK(co_await f.stored_blobs() == 2);
        CHECK(co_await f.scalar("SELECT max(refcount) FROM blobs") == 2);

        auto out = co_await f.remove("k", v2.version_id); // not current: the current one stays
        CHECK_FALSE(out.delete_marker);
        CHECK(out.version_id == v2.version_id);
        CHECK(co_await f.stored_blobs() == 1);
        CHECK(co_await f.read("k") == content(100, 'a'));

        co_await f.remove("k", v3.version_id); // current: v1 becomes current again; the shared blob stays
        CHECK(co_await f.stored_blobs() == 1);
        auto current = co_await f.objects->open_object(f.bucket.id, "k");
        REQUIRE(current);
        CHECK(current->version.version_id == v1.version_id);
        CHECK(co_await f.refcounts_consistent());

        // Deleting a version that does not exist (any more) succeeds and changes nothing.
        out = co_await f.remove("k", v3.version_id);
        CHECK_FALSE(out.delete_marker);
        CHECK(co_await f.scalar("SELECT count(*) FROM object_versions") == 1);

        co_await f.remove("k", v1.version_id);
        CHECK(co_await f.scalar("SELECT count(*) FROM object_versions") == 0);
        CHECK(co_await f.scalar("SELECT count(*) FROM blobs") == 0);
        CHECK(co_await f.stored_blobs() == 0);
    });
}

TEST_CASE("with versioning suspended writes replace the null version and keep the others")
{
    with_versioning_fixture([](versioning_fixture& f) -> asio::awaitable<void> {
        co_await f.put("k", content(100, '0')); // null version from before versioning
        co_await f.set(versioning_mode::enabled);
        auto kept = co_await f.put("k", content(100, 'a'));
        co_await f.set(versioning_mode::suspended);
        CHECK(co_await f.stored_blobs() == 2);

        auto n1 = co_await f.put("k", content(100, 'b')); // replaces the old null version (not current)
        CHECK(n1.version_id == "null");
        CHECK(co_await f.stored_blobs() == 2);
        CHECK(co_await f.read("k") == content(100, 'b'));
        CHECK(co_await f.read("k", kept.version_id) == content(100, 'a'));

        auto n2 = co_await f.put("k", content(100, 'c')); // replaces the current null version
        CHECK(n2.version_id == "null");
        CHECK(co_await f.stored_blobs() == 2);
        auto page = co_await f.versions();
        REQUIRE(page.entries.size() == 2);
        CHECK(page.entries[0].version_id == "null");
        CHECK(page.entries[0].is_latest);
        CHECK(page.entries[1].version_id == kept.version_id);

        // A plain delete puts a null delete marker in place of the null version.
        auto marker = co_await f.remove("k");
        CHECK(marker.delete_marker);
        CHECK(marker.version_id == "null");
        CHECK(co_await f.stored_blobs() == 1);
        page = co_await f.versions();
        REQUIRE(page.entries.size() == 2);
        CHECK(page.entries[0].is_delete_marker);
        CHECK(page.entries[0].version_id == "null");
        CHECK(co_await f.refcounts_consistent());
    });
}

TEST_CASE("copying an older version publishes it as a new version without new blobs")
{
    with_versioning_fixture([](versioning_fixture& f) -> asio::awaitable<void> {
        co_await f.set(versioning_mode::enabled);
        auto v1 = co_await f.put("k", content(100, 'a'));
        co_await f.put("k", content(100, 'b'));
        auto source = co_await f.objects->open_version(f.bucket.id, "k", v1.version_id);
        REQUIRE(source);
        registry::copy_object_request request{.source_bucket = &f.bucket,
                                              .source_key = "k",
                                              .target = &f.bucket,
                                              .key = "k",
                                              .owner_id = "alice",
                                              .expected_source_row = source->version.row_id,
                                              .source_version_pinned = true};
        auto copied = co_await f.objects->copy_object(registry::system_audit_context(), std::move(request));
        REQUIRE(copied);
        CHECK(copied->version_id != v1.version_id);
        CHECK(co_await f.read("k") == content(100, 'a'));
        CHECK(co_await f.stored_blobs() == 2);
        CHECK((co_await f.versions()).entries.size() == 3);
        CHECK(co_await f.refcounts_consistent());
    });
}

TEST_CASE("completing a multipart upload in a versioned bucket adds a version")
{
    with_versioning_fixture([](versioning_fixture& f) -> asio::awaitable<void> {
        co_await f.set(versioning_mode::enabled);
        auto first = co_await f.put("big", content(100, 'a'));
        registry::object_headers headers;
        auto upload =
            co_await f.multipart->create(registry::system_audit_context(), f.bucket, "big", "alice", headers);
        REQUIRE(upload);
        std::vector<registry::completed_part_ref> listed;
        for (int n = 1; n <= 2; ++n) {
            string_source body(content(2000, static_cast<char>('0' + n)));
            registry::ingest_limits limits{.content_length = 2000};
            auto part =
                co_await f.multipart->upload_part(registry::system_audit_context(), *upload, n, body, limits);
            REQUIRE(part);
            listed.push_back({n, part->etag, ""});
        }
        auto done = co_await f.multipart->complete(registry::system_audit_context(), f.bucket.id, "big",
                                                   upload->upload_id, listed);
        REQUIRE(done);
        CHECK(registry::is_valid_version_id(done->version_id));
        CHECK(done->version_id != "null");
        CHECK(co_await f.read("big") == content(2000, '1') + content(2000, '2'));
        CHECK(co_await f.read("big", first.version_id) == content(100, 'a'));
        CHECK(co_await f.stored_blobs() == 3);
        CHECK(co_await f.refcounts_consistent());
    });
}

TEST_CASE("version listing pages with small max-keys give every version once, in order")
{
    with_versioning_fixture([](versioning_fixture& f) -> asio::awaitable<void> {
        co_await f.set(versioning_mode::enabled);
        for (const char* key : {"a", "b", "dir/x", "dir/y", "e"})
            for (char seed : {'1', '2', '3'})
                co_await f.put(key, content(10, seed));
        co_await f.remove("b");
        auto all = co_await f.versions();
        CHECK(all.entries.size() == 16);
        CHECK_FALSE(all.truncated);

        for (std::size_t max : {1, 2, 3, 5}) {
            std::vector<std::pair<std::string, std::string>> seen;
            std::string key_marker, version_marker;
            for (int pages = 0; pages < 100; ++pages) {
                auto page = co_await f.versions("", "", key_marker, version_marker, max);
                CHECK(page.entries.size() <= max);
                for (const auto& e : page.entries)
                    seen.emplace_back(e.key, e.version_id);
                if (!page.truncated)
                    break;
                key_marker = page.next_key_marker;
                version_marker = page.next_version_id_marker;
            }
            REQUIRE(seen.size() == all.entries.size());
            for (std::size_t i = 0; i < seen.size(); ++i) {
                CHECK(seen[i].first == all.entries[i].key);
                CHECK(seen[i].second == all.entries[i].version_id);
            }
        }

        // With a delimiter, dir/ is one common prefix counted once against max-keys.
        std::vector<std::string> prefixes;
        std::size_t versions = 0;
        std::string key_marker, version_marker;
        for (int pages = 0; pages < 100; ++pages) {
            auto page = co_await f.versions("", "/", key_marker, version_marker, 2);
            versions += page.entries.size();
            prefixes.insert(prefixes.end(), page.common_prefixes.begin(), page.common_prefixes.end());
            if (!page.truncated)
                break;
            key_marker = page.next_key_marker;
            version_marker = page.next_version_id_marker;
        }
        CHECK(prefixes == std::vector<std::string>{"dir/"});
        CHECK(versions == 10);

        auto under = co_await f.versions("dir/");
        CHECK(under.entries.size() == 6);
        auto after_b = co_await f.versions("", "", "b");
        CHECK(after_b.entries.front().key == "dir/x");
    });
}

TEST_CASE("concurrent writers of one versioned key leave exactly one current version")
{
    with_versioning_fixture([](versioning_fixture& f) -> asio::awaitable<void> {
        co_await f.set(versioning_mode::enabled);
        auto ex = co_await asio::this_coro::executor;
        constexpr int writers = 12;
        int finished = 0;
        for (int i = 0; i < writers; ++i)
            asio::co_spawn(ex, write_hot(f, i, finished), [](std::exception_ptr e) {
                if (e)
                    std::rethrow_exception(e);
            });
        asio::steady_timer timer(ex);
        while (finished < writers) {
            timer.expires_after(std::chrono::milliseconds(10));
            co_await timer.async_wait(asio::use_awaitable);
        }
        CHECK(co_await f.scalar("SELECT count(*) FROM object_versions WHERE key = 'hot'") == writers);
        CHECK(
            co_await f.scalar("SELECT count(*) FROM object_versions WHERE key = 'hot' AND superseded_seq IS "
                              "NULL") == 1);
        CHECK(
            co_await f.scalar("SELECT count(*) FROM object_versions WHERE key = 'hot' AND superseded_seq IS "
                              "NULL AND created_seq = (SELECT max(created_seq) FROM object_versions)") == 1);
        CHECK(co_await f.refcounts_consistent());
    });
}

TEST_CASE("a snapshot keeps the versions it sees through overwrites and deletes until it is deleted")
{
    with_versioning_fixture([](versioning_fixture& f) -> asio::awaitable<void> {
        registry::snapshot_service snapshots(*f.pool, *f.store, *f.objects);
        auto k1 = co_await f.put("k", content(100, 'a'));
        auto gone = co_await f.put("gone", content(100, 'g'));
        auto s = co_await snapshots.create(registry::system_audit_context(), f.bucket.id, "s", "", "alice");
        REQUIRE(s);
        auto dup = co_await snapshots.create(registry::system_audit_context(), f.bucket.id, "s", "", "alice");
        REQUIRE_FALSE(dup);
        CHECK(dup.error().code == errc::already_exists);
        auto k2 = co_await f.put("k", content(100, 'b'));
        co_await f.remove("gone");

        CHECK(co_await f.lists_only("k"));
        CHECK(co_await f.read("k") == content(100, 'b'));
        const auto history = co_await f.versions();
        CHECK(history.entries.size() == 1); // purged rows are in no live view
        auto old = co_await f.objects->open_as_of(f.bucket.id, "k", s->seq);
        REQUIRE(old);
        CHECK(old->version.etag == k1.etag);
        auto kept = co_await f.objects->open_as_of(f.bucket.id, "gone", s->seq);
        REQUIRE(kept);
        CHECK(kept->version.etag == gone.etag);
        auto now = co_await f.objects->open_as_of(f.bucket.id, "k", std::int64_t{1} << 60);
        REQUIRE(now);
        CHECK(now->version.etag == k2.etag);
        CHECK(co_await f.scalar("SELECT count(*) FROM object_versions WHERE purged") == 2);
        CHECK(co_await f.stored_blobs() == 3);
        CHECK(co_await f.refcounts_consistent());

        REQUIRE(co_await snapshots.remove(registry::system_audit_context(), f.bucket.id, "s"));
        CHECK(co_await f.scalar("SELECT count(*) FROM object_versions WHERE purged") == 0);
        CHECK(co_await f.stored_blobs() == 1);
        CHECK(co_await f.refcounts_consistent());
        auto missing = co_await snapshots.remove(registry::system_audit_context(), f.bucket.id, "s");
        REQUIRE_FALSE(missing);
        CHECK(missing.error().code == errc::not_found);
    });
}

TEST_CASE("a version made current again by a permanent delete keeps its past for the snapshots in between")
{
    with_versioning_fixture([](versioning_fixture& f) -> asio::awaitable<void> {
        registry::snapshot_service snapshots(*f.pool, *f.store, *f.objects);
        co_await f.set(versioning_mode::enabled);
        auto v1 = co_await f.put("m", content(100, '1'));
        auto s0 = co_await snapshots.create(registry::system_audit_context(), f.bucket.id, "s0", "", "alice");
        auto v2 = co_await f.put("m", content(100, '2'));
        auto s1 = co_await snapshots.create(registry::system_audit_context(), f.bucket.id, "s1", "", "alice");
        REQUIRE(s0);
        REQUIRE(s1);
        co_await f.remove("m", v2.version_id);

        CHECK(co_await f.read("m") == content(100, '1'));
        CHECK(co_await f.read("m", v1.version_id) == content(100, '1'));
        auto gone = co_await f.objects->open_version(f.bucket.id, "m", v2.version_id);
        REQUIRE_FALSE(gone);
        CHECK(gone.error().code == errc::no_such_version);
        auto at0 = co_await f.objects->open_as_of(f.bucket.id, "m", s0->seq);
        auto at1 = co_await f.objects->open_as_of(f.bucket.id, "m", s1->seq);
        REQUIRE(at0);
        REQUIRE(at1);
        CHECK(at0->version.etag == v1.etag);
        CHECK(at1->version.etag == v2.etag);
        const auto history = co_await f.versions();
        REQUIRE(history.entries.size() == 1);
        CHECK(history.entries[0].version_id == v1.version_id);
        CHECK(history.entries[0].is_latest);
        CHECK(co_await f.refcounts_consistent());

        REQUIRE(co_await snapshots.remove(registry::system_audit_context(), f.bucket.id, "s0"));
        REQUIRE(co_await snapshots.remove(registry::system_audit_context(), f.bucket.id, "s1"));
        CHECK(co_await f.scalar("SELECT count(*) FROM object_versions") == 1);
        CHECK(co_await f.stored_blobs() == 1);
        CHECK(co_await f.refcounts_consistent());
    });
}

namespace {

/// One writer of the snapshot consistency test: puts w<writer>/00 .. w<writer>/19 in order.
asio::awaitable<void> write_sequence(versioning_fixture& f, int writer, int& finished)
{
    for (int n = 0; n < 20; ++n)
        co_await f.put("w" + std::to_string(writer) + "/" + (n < 10 ? "0" : "") + std::to_string(n),
                       content(10, 'a'));
    ++finished;
}

asio::awaitable<std::vector<std::string>> keys_as_of(versioning_fixture& f, std::int64_t seq)
{
    registry::list_request request;
    request.bucket_id = f.bucket.id;
    request.as_of = seq;
    auto page = co_await f.objects->list(std::move(request));
    REQUIRE(page);
    std::vector<std::string> keys;
    for (const auto& e : page->contents)
        keys.push_back(e.key);
    co_return keys;
}

} // namespace

TEST_CASE("snapshots taken while writers commit are consistent cuts that never change afterwards")
{
    with_versioning_fixture([](versioning_fixture& f) -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        registry::snapshot_service snapshots(*f.pool, *f.store, *f.objects);
        constexpr int writers = 6;
        int finished = 0;
        for (int i = 0; i < writers; ++i)
            asio::co_spawn(ex, write_sequence(f, i, finished), [](std::exception_ptr e) {
                if (e)
                    std::rethrow_exception(e);
            });
        // Snapshots keep being taken while the writers run; each one's keys are read at once.
        std::vector<std::int64_t> seqs;
        std::vector<std::vector<std::string>> at_creation;
        asio::steady_timer timer(ex);
        while (finished < writers) {
            auto s = co_await snapshots.create(registry::system_audit_context(), f.bucket.id,
                                               "s" + std::to_string(seqs.size()), "", "alice");
            REQUIRE(s);
            seqs.push_back(s->seq);
            at_creation.push_back(co_await keys_as_of(f, s->seq));
            timer.expires_after(std::chrono::milliseconds(2));
            co_await timer.async_wait(asio::use_awaitable);
        }
        // Writes in flight when a snapshot was taken committed before it (the bucket lock), so what it shows
        // is fixed at creation, and each writer's keys in it are a prefix of what that writer wrote.
        for (std::size_t j = 0; j < seqs.size(); ++j) {
            const auto now = co_await keys_as_of(f, seqs[j]);
            CHECK(now == at_creation[j]);
            for (int i = 0; i < writers; ++i) {
                std::vector<std::string> mine;
                for (const auto& k : now)
                    if (k.starts_with("w" + std::to_string(i) + "/"))
                        mine.push_back(k);
                for (std::size_t n = 0; n < mine.size(); ++n)
                    CHECK(mine[n] == "w" + std::to_string(i) + "/" + (n < 10 ? "0" : "") + std::to_string(n));
            }
        }
        MESSAGE(seqs.size() << " snapshots taken during " << writers * 20 << " writes");
        CHECK(co_await f.refcounts_consistent());
    });
}
