#include "common/hash.hpp"
#include "integration/test_db.hpp"
#include "registry/repo/audit.hpp"
#include "registry/repo/bucket_repository.hpp"
#include "registry/repo/identity_repository.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/service/blob_collector.hpp"
#include "registry/service/multipart_service.hpp"
#include "registry/service/object_service.hpp"
#include "storage/faulty/faulty_blob_store.hpp"
#include "storage/memory/memory_blob_store.hpp"
#include "test_content.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <cstring>
#include <doctest/doctest.h>
#include <functional>

using namespace depot;
namespace asio = boost::asio;

using test::content;
using test::string_source;

namespace {

/// A migrated database, a faulty memory store and the services over them, with one user and one bucket.
struct object_fixture
{
    test::test_database db{{.migrate = true}};
    storage::faulty_blob_store faulty = storage::make_faulty_blob_store(storage::make_memory_blob_store());
    std::shared_ptr<pg::pool> pool;
    std::unique_ptr<registry::object_service> objects;
    std::unique_ptr<registry::multipart_service> multipart;
    registry::bucket bucket;

    asio::awaitable<void> start()
    {
        auto executor = co_await asio::this_coro::executor;
        pg::pool_options options{.conninfo = db.url()};
        pool = pg::make_pool(executor, options);
        objects = std::make_unique<registry::object_service>(*pool, *faulty.store);
        multipart = std::make_unique<registry::multipart_service>(
            *pool, *faulty.store, registry::multipart_limits{.min_part_size = 1000});
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

    asio::awaitable<result<registry::object_version>> put(std::string key, std::string data,
                                                          std::string expected_md5 = {})
    {
        string_source body(data);
        registry::put_object_request request{.target = &bucket,
                                             .key = std::move(key),
                                             .owner_id = "alice",
                                             .content_length = data.size(),
                                             .expected_md5 = std::move(expected_md5),
                                             .body = &body};
        co_return co_await objects->put_object(registry::system_audit_context(), std::move(request));
    }

    asio::awaitable<std::string> read(std::string key)
    {
        auto h = co_await objects->open_object(bucket.id, key);
        REQUIRE(h);
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

    asio::awaitable<std::int64_t> count(std::string table)
    {
        auto c = co_await pool->acquire();
        auto rs = co_await registry::sql(*c, "SELECT count(*) FROM " + table);
        co_return rs[0].i64(0);
    }

    asio::awaitable<std::size_t> stored_blobs()
    {
        auto l = co_await faulty.store->list("", 100000);
        REQUIRE(l);
        co_return l->size();
    }
};

/// Terminates the backends of the fixture's database found sleeping in pg_sleep (a test trigger's COMMIT
/// hook), so that their clients lose the connection while their COMMIT is unanswered.
struct sleeper_killer
{
    bool stop = false;
    bool killed = false;
    bool finished = false;
};

asio::awaitable<void> terminate_sleepers(object_fixture& f, sleeper_killer& k)
{
    asio::steady_timer timer(co_await asio::this_coro::executor);
    while (!k.stop) {
        {
            auto c = co_await f.pool->acquire();
            auto rs =
                co_await registry::sql(*c, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                           "WHERE datname = current_database() AND wait_event = 'PgSleep'");
            if (rs[0].i64(0) > 0)
                k.killed = true;
        }
        timer.expires_after(std::chrono::milliseconds(25));
        co_await timer.async_wait(asio::use_awaitable);
    }
    k.finished = true;
}

template <class F>
void with_object_fixture(F body)
{
    test::run([&]() -> asio::awaitable<void> {
        object_fixture f;
        co_await f.start();
        co_await body(f);
        co_await f.stop();
    }());
}

} // namespace

TEST_CASE("a stored object reads back, lists, and deleting it removes its blob")
{
    with_object_fixture([](object_fixture& f) -> asio::awaitable<void> {
        const auto data = content(3'000'000, 'a');
        auto put = co_await f.put("dir/weights.bin", data);
        REQUIRE(put);
        CHECK(put->etag == to_hex(md5(data)));
        CHECK(put->checksum_algorithm == "CRC64NVME");
        CHECK(co_await f.read("dir/weights.bin") == data);
        registry::list_request list{.bucket_id = f.bucket.id, .prefix = "", .delimiter = "/"};
        auto page = co_await f.objects->list(list);
        REQUIRE(page);
        REQUIRE(page->common_prefixes.size() == 1);
        CHECK(page->common_prefixes[0] == "dir/");
        CHECK(co_await f.stored_blobs() == 1);
        REQUIRE(co_await f.objects->delete_object(registry::system_audit_context(), f.bucket.id,
                                                  "dir/weights.bin"));
        CHECK(co_await f.stored_blobs() == 0);
        CHECK(co_await f.count("blobs") == 0);
        CHECK(co_await f.count("object_versions") == 0);
    });
}

TEST_CASE("identical content is stored once and lives until its last reference goes")
{
    with_object_fixture([](object_fixture& f) -> asio::awaitable<void> {
        const auto data = content(200'000, 'b');
        REQUIRE(co_await f.put("a", data));
        REQUIRE(co_await f.put("b", data));
        CHECK(co_await f.stored_blobs() == 1);
        REQUIRE(co_await f.objects->delete_object(registry::system_audit_context(), f.bucket.id, "a"));
        CHECK(co_await f.read("b") == data);
        CHECK(co_await f.stored_blobs() == 1);
        REQUIRE(co_await f.objects->delete_object(registry::system_audit_context(), f.bucket.id, "b"));
        CHECK(co_await f.stored_blobs() == 0);
    });
}

TEST_CASE("a wrong Content-MD5 stores nothing")
{
    with_object_fixture([](object_fixture& f) -> asio::awaitable<void> {
        auto put = co_await f.put("k", content(50'000, 'c'), md5("something else"));
        REQUIRE_FALSE(put);
        CHECK(put.error().code == errc::bad_digest);
        CHECK(co_await f.stored_blobs() == 0);
        CHECK(co_await f.count("object_versions") == 0);
        CHECK(co_await f.count("blobs") == 0);
        // The memory store counts writers dropped without abort as leftovers; there must be none.
        auto leftovers = co_await f.faulty.store->remove_incomplete(std::chrono::system_clock::now() +
                                                                    std::chrono::hours(1));
        CHECK(leftovers.value() == 0);
    });
}

TEST_CASE("a blob-store failure at any step of a put leaves no object, no blob row and no blob")
{
    with_object_fixture([](object_fixture& f) -> asio::awaitable<void> {
        const auto old_data = content(300'000, 'o');
        REQUIRE(co_await f.put("k", old_data));
        const auto data = content(2'500'000, 'd');
        for (std::size_t n = 1; n < 12; ++n) {
            CAPTURE(n);
            f.faulty.faults->fail_nth(n, errc::unavailable);
            auto put = co_await f.put("k", data);
            f.faulty.faults->heal();
            if (put) {
                // The failure hit the removal of the replaced blob after the commit (left to the collector),
                // or came after the last storage call: the new object is whole.
                CHECK(co_await f.read("k") == data);
                break;
            }
            CHECK(put.error().code == errc::unavailable);
            CHECK(co_await f.read("k") == old_data);
            CHECK(co_await f.count("object_versions") == 1);
            CHECK(co_await f.count("blobs") == 1);
            CHECK(co_await f.stored_blobs() == 1);
        }
    });
}

TEST_CASE("completing a multipart upload publishes the listed parts and releases replaced and unlisted ones")
{
    with_object_fixture([](object_fixture& f) -> asio::awaitable<void> {
        registry::object_headers headers;
        auto upload =
            co_await f.multipart->create(registry::system_audit_context(), f.bucket, "big", "alice", headers);
        REQUIRE(upload);
        const auto p1_old = content(5'000, '1'), p1 = content(5'000, 'x'), p2 = content(3'000, '2'),
                   p3 = content(4'000, '3');
        std::vector<registry::part_info> parts;
        for (const auto& [number, data] :
             std::vector<std::pair<int, std::string>>{{1, p1_old}, {1, p1}, {2, p2}, {3, p3}}) {
            string_source body(data);
            registry::ingest_limits limits{.content_length = data.size()};
            auto part = co_await f.multipart->upload_part(registry::system_audit_context(), *upload, number,
                                                          body, limits);
            REQUIRE(part);
            parts.push_back(*part);
        }
        CHECK(co_await f.stored_blobs() == 3); // the replaced part 1 is gone
        std::vector<registry::completed_part_ref> listed{{1, parts[1].etag, ""}, {2, parts[2].etag, ""}};
        auto done = co_await f.multipart->complete(registry::system_audit_context(), f.bucket.id, "big",
                                                   upload->upload_id, listed);
        REQUIRE(done);
        CHECK(done->parts_count == 2);
        CHECK(done->etag.ends_with("-2"));
        CHECK(co_await f.read("big") == p1 + p2);
        CHECK(co_await f.stored_blobs() == 2); // unlisted part 3 released
        CHECK(co_await f.count("multipart_uploads") == 0);
        // A retry after success (the response was lost) answers the same result, as S3 does, and changes
        // nothing; another part list is not that completion.
        auto again = co_await f.multipart->complete(registry::system_audit_context(), f.bucket.id, "big",
                                                    upload->upload_id, listed);
        REQUIRE(again);
        CHECK(again->etag == done->etag);
        CHECK(again->version_id == done->version_id);
        CHECK(co_await f.read("big") == p1 + p2);
        CHECK(co_await f.stored_blobs() == 2);
        std::vector<registry::completed_part_ref> other{{1, parts[1].etag, ""}};
        auto different = co_await f.multipart->complete(registry::system_audit_context(), f.bucket.id, "big",
                                                        upload->upload_id, other);
        REQUIRE_FALSE(different);
        CHECK(different.error().code == errc::no_such_upload);
    });
}

TEST_CASE("the blob collector removes committed blobs no row names and leftovers, after the grace age only")
{
    with_object_fixture([](object_fixture& f) -> asio::awaitable<void> {
        REQUIRE(co_await f.put("kept/a", content(3000, 'a')));
        REQUIRE(co_await f.put("kept/b", content(5000, 'b')));
        // A blob that committed but whose publishing transaction never did (a crash between the two).
        auto orphan = co_await f.faulty.store->create();
        REQUIRE(orphan);
        const auto bytes = content(700, 'o');
        REQUIRE(co_await (*orphan)->write(std::as_bytes(std::span(bytes))));
        REQUIRE(co_await (*orphan)->commit());
        const auto orphan_id = (*orphan)->id();
        // A write a crash cut short: never committed.
        auto unfinished = co_await f.faulty.store->create();
        REQUIRE(unfinished);
        REQUIRE(co_await (*unfinished)->write(std::as_bytes(std::span(bytes))));
        CHECK(co_await f.stored_blobs() == 3);

        // Within the grace age nothing is touched: the orphan could be a write about to publish.
        const auto hour_ago = std::chrono::system_clock::now() - std::chrono::hours(1);
        auto early = co_await registry::collect_unreachable_blobs(*f.pool, *f.faulty.store, hour_ago);
        CHECK(early.orphans == 0);
        CHECK(early.incomplete == 0);
        CHECK(early.scanned == 3);
        CHECK(co_await f.stored_blobs() == 3);

        const auto later = std::chrono::system_clock::now() + std::chrono::seconds(1);
        auto report = co_await registry::collect_unreachable_blobs(*f.pool, *f.faulty.store, later);
        CHECK(report.orphans == 1);
        CHECK(report.incomplete == 1);
        CHECK(co_await f.stored_blobs() == 2);
        CHECK_FALSE(co_await f.faulty.store->stat(orphan_id));
        CHECK(co_await f.read("kept/a") == content(3000, 'a'));
        CHECK(co_await f.read("kept/b") == content(5000, 'b'));
        CHECK(co_await f.count("blobs") == 2);
        // The cut-short writer can no longer commit.
        CHECK_FALSE(co_await (*unfinished)->commit());
    });
}

TEST_CASE("the consistency check agrees with every write path and reports each kind of damage")
{
    with_object_fixture([](object_fixture& f) -> asio::awaitable<void> {
        // Every write path: single PUTs (one deduplicated), an overwrite, a delete, and a multipart upload
        // with one part still pending in a second upload.
        REQUIRE(co_await f.put("a", content(3000, 'a')));
        REQUIRE(co_await f.put("a-again", content(3000, 'a')));
        REQUIRE(co_await f.put("b", content(4000, 'b')));
        REQUIRE(co_await f.put("b", content(4500, 'c')));
        REQUIRE(co_await f.objects->delete_object(registry::system_audit_context(), f.bucket.id, "a-again"));
        registry::object_headers headers;
        auto done_upload =
            co_await f.multipart->create(registry::system_audit_context(), f.bucket, "mp", "alice", headers);
        auto open_upload = co_await f.multipart->create(registry::system_audit_context(), f.bucket, "pending",
                                                        "alice", headers);
        REQUIRE(done_upload);
        REQUIRE(open_upload);
        std::vector<registry::completed_part_ref> listed;
        for (int number : {1, 2}) {
            const auto data = content(number == 1 ? 2000 : 500, static_cast<char>('m' + number));
            string_source body(data);
            registry::ingest_limits limits{.content_length = data.size()};
            auto part = co_await f.multipart->upload_part(registry::system_audit_context(), *done_upload,
                                                          number, body, limits);
            REQUIRE(part);
            listed.push_back({number, part->etag, ""});
            string_source again(data);
            REQUIRE(co_await f.multipart->upload_part(registry::system_audit_context(), *open_upload, number,
                                                      again, limits));
        }
        REQUIRE(co_await f.multipart->complete(registry::system_audit_context(), f.bucket.id, "mp",
                                               done_upload->upload_id, listed));

        auto healthy = co_await registry::check_consistency(*f.pool, *f.faulty.store);
        CHECK(healthy.clean());
        CHECK(healthy.store_blobs == healthy.registry_blobs);
        CHECK(healthy.store_blobs == 4); // a, c-content of b, two shared part blobs

        // Damage: a lost blob, an orphan, and a wrong refcount.
        auto conn = co_await f.pool->acquire();
        auto victim = co_await registry::sql(*conn, "SELECT store_id FROM blobs WHERE size = 4500");
        const auto lost = victim[0].str(0);
        REQUIRE(co_await f.faulty.store->remove(lost));
        auto orphan = co_await f.faulty.store->create();
        REQUIRE(orphan);
        const auto bytes = content(10, 'z');
        REQUIRE(co_await (*orphan)->write(std::as_bytes(std::span(bytes))));
        REQUIRE(co_await (*orphan)->commit());
        co_await registry::sql(*conn, "UPDATE blobs SET refcount = refcount + 5 WHERE size = 3000");
        conn = {};

        auto damaged = co_await registry::check_consistency(*f.pool, *f.faulty.store);
        CHECK_FALSE(damaged.clean());
        REQUIRE(damaged.missing.size() == 1);
        CHECK(damaged.missing[0] == lost);
        REQUIRE(damaged.orphans.size() == 1);
        CHECK(damaged.orphans[0] == std::pair<std::string, std::uint64_t>((*orphan)->id(), 10));
        REQUIRE(damaged.refcount_mismatches.size() == 1);
        CHECK(std::get<1>(damaged.refcount_mismatches[0]) == 6);
        CHECK(std::get<2>(damaged.refcount_mismatches[0]) == 1);

        CHECK(co_await registry::repair_refcounts(*f.pool, *f.faulty.store) == 1);
        auto repaired = co_await registry::check_consistency(*f.pool, *f.faulty.store);
        CHECK(repaired.refcount_mismatches.empty());
        CHECK(repaired.missing.size() == 1);
        CHECK(co_await f.read("a") == content(3000, 'a'));
    });
}

TEST_CASE("a body longer than a segment is stored in 8 MiB blobs that a single PUT and 8 MiB parts share")
{
    with_object_fixture([](object_fixture& f) -> asio::awaitable<void> {
        constexpr std::size_t seg = registry::dedup_segment_size;
        const auto data = content(2 * seg + 1234, 's');
        auto put = co_await f.put("single", data);
        REQUIRE(put);
        CHECK(put->etag == to_hex(md5(data)));
        CHECK(put->sha256 == sha256(data)); // the whole body's digest, not a segment's
        CHECK(co_await f.stored_blobs() == 3);
        CHECK(co_await f.count("object_segments") == 3);
        CHECK(co_await f.read("single") == data);

        // The same bytes in 8 MiB parts, then in one 16 MiB part: no new blob survives either upload.
        for (const auto& sizes : std::vector<std::vector<std::size_t>>{{seg, seg, 1234}, {2 * seg, 1234}}) {
            registry::object_headers headers;
            auto upload = co_await f.multipart->create(registry::system_audit_context(), f.bucket, "multi",
                                                       "alice", headers);
            REQUIRE(upload);
            std::vector<registry::completed_part_ref> listed;
            std::size_t at = 0;
            for (std::size_t i = 0; i < sizes.size(); ++i) {
                string_source body(data.substr(at, sizes[i]));
                at += sizes[i];
                registry::ingest_limits limits{.content_length = sizes[i]};
                auto part = co_await f.multipart->upload_part(registry::system_audit_context(), *upload,
                                                              static_cast<int>(i + 1), body, limits);
                REQUIRE(part);
                listed.push_back({static_cast<int>(i + 1), part->etag, ""});
            }
            auto done = co_await f.multipart->complete(registry::system_audit_context(), f.bucket.id, "multi",
                                                       upload->upload_id, listed);
            REQUIRE(done);
            CHECK(co_await f.read("multi") == data);
            CHECK(co_await f.stored_blobs() == 3);
        }

        // A segment that repeats inside one body is stored once.
        const auto piece = content(seg, 'r');
        REQUIRE(co_await f.put("repeated", piece + piece + piece));
        CHECK(co_await f.stored_blobs() == 4);
        CHECK(co_await f.read("repeated") == piece + piece + piece);

        // A bucket without deduplication keeps one private blob per body.
        registry::bucket scratch = f.bucket;
        scratch.dedup = false;
        string_source body(data);
        registry::put_object_request request{.target = &scratch,
                                             .key = "scratch",
                                             .owner_id = "alice",
                                             .content_length = data.size(),
                                             .body = &body};
        REQUIRE(co_await f.objects->put_object(registry::system_audit_context(), std::move(request)));
        CHECK(co_await f.stored_blobs() == 5);

        for (const auto* key : {"single", "multi", "repeated", "scratch"})
            REQUIRE(co_await f.objects->delete_object(registry::system_audit_context(), f.bucket.id, key));
        CHECK(co_await f.stored_blobs() == 0);
        CHECK(co_await f.count("blobs") == 0);
    });
}

TEST_CASE("a part is hashed with SHA-256 only where something reads it, and every digest stays right")
{
    with_object_fixture([](object_fixture& f) -> asio::awaitable<void> {
        constexpr std::size_t seg = registry::dedup_segment_size;
        const auto data = content(2 * seg, 'h');
        REQUIRE(co_await f.put("single", data)); // two shared pieces
        REQUIRE(co_await f.stored_blobs() == 2);
        auto upload =
            co_await f.multipart->create(registry::system_audit_context(), f.bucket, "multi", "alice", {},
                                         checksum_algorithm::sha256, checksum_type::composite);
        REQUIRE(upload);

        // A SHA-256 checksum on a part of two pieces: the part's digest is computed for it, and checked.
        string_source wrong_body(data);
        registry::ingest_limits wrong{.content_length = data.size(),
                                      .checksum = checksum_algorithm::sha256,
                                      .checksum_value = to_base64(sha256(data + "x"))};
        auto refused = co_await f.multipart->upload_part(registry::system_audit_context(), *upload, 1,
                                                         wrong_body, wrong);
        REQUIRE_FALSE(refused);
        CHECK(refused.error().code == errc::bad_digest);
        CHECK(co_await f.stored_blobs() == 2);

        string_source body(data);
        registry::ingest_limits limits{.content_length = data.size(),
                                       .checksum = checksum_algorithm::sha256,
                                       .checksum_value = to_base64(sha256(data))};
        auto part =
            co_await f.multipart->upload_part(registry::system_audit_context(), *upload, 1, body, limits);
        REQUIRE(part);
        CHECK(part->etag == to_hex(md5(data)));
        CHECK(co_await f.stored_blobs() == 2); // its pieces' digests found the PUT's blobs

        // A part of unknown length that turns out to be one piece: the piece's own digest names it.
        const auto tail = data.substr(0, seg);
        string_source tail_body(tail);
        registry::ingest_limits unsized{.checksum = checksum_algorithm::sha256};
        auto second = co_await f.multipart->upload_part(registry::system_audit_context(), *upload, 2,
                                                        tail_body, unsized);
        REQUIRE(second);
        CHECK(co_await f.stored_blobs() == 2);
        std::vector<registry::completed_part_ref> listed;
        listed.push_back({1, part->etag, ""});
        listed.push_back({2, second->etag, ""});
        auto done = co_await f.multipart->complete(registry::system_audit_context(), f.bucket.id, "multi",
                                                   upload->upload_id, listed);
        REQUIRE(done);
        CHECK(co_await f.read("multi") == data + tail);
    });
}

TEST_CASE("a failure after some segments were committed leaves none of them behind")
{
    with_object_fixture([](object_fixture& f) -> asio::awaitable<void> {
        constexpr std::size_t seg = registry::dedup_segment_size;
        const auto data = content(2 * seg + 10, 'f');
        // A wrong Content-MD5 is found only after both full segments were committed.
        auto bad = co_await f.put("k", data, md5("not the body"));
        REQUIRE_FALSE(bad);
        CHECK(bad.error().code == errc::bad_digest);
        CHECK(co_await f.stored_blobs() == 0);
        // The n-th create, write or commit fails: of the first, second and third segment. Ingest writes
        // whole 1 MiB chunks, so a segment is 8 writes: 8, 9, 16 and 17 are the first and last write of
        // a segment on either side of a boundary.
        for (const auto op : {storage::blob_op::create, storage::blob_op::write, storage::blob_op::commit}) {
            for (std::size_t n : {1, 2, 3, 8, 9, 16, 17}) {
                if (op != storage::blob_op::write && n > 3)
                    continue;
                CAPTURE(storage::to_string(op));
                CAPTURE(n);
                f.faulty.faults->fail_nth_of(op, n, errc::unavailable);
                auto put = co_await f.put("k", data);
                f.faulty.faults->heal();
                REQUIRE_FALSE(put);
                CHECK(put.error().code == errc::unavailable);
                CHECK(co_await f.stored_blobs() == 0);
                CHECK(co_await f.count("blobs") == 0);
                CHECK(co_await f.count("object_versions") == 0);
            }
        }
        REQUIRE(co_await f.put("k", data));
        CHECK(co_await f.read("k") == data);
        auto leftovers = co_await f.faulty.store->remove_incomplete(std::chrono::system_clock::now() +
                                                                    std::chrono::hours(1));
        CHECK(leftovers.value() == 0);
    });
}

TEST_CASE(
    "new blobs go at once when PostgreSQL refuses the COMMIT, and to the collector when its answer is lost")
{
    with_object_fixture([](object_fixture& f) -> asio::awaitable<void> {
        REQUIRE(co_await f.put("kept", content(3000, 'k')));
        // A COMMIT hook: refuses one key's version, sleeps (until terminated) on another's.
        {
            auto c = co_await f.pool->acquire();
            co_await registry::sql(
                *c, "CREATE FUNCTION test_commit_hook() RETURNS trigger LANGUAGE plpgsql AS $$ "
                    "BEGIN "
                    "IF NEW.key = 'refused' THEN RAISE EXCEPTION 'refused at commit'; END IF; "
                    "IF NEW.key = 'unanswered' THEN PERFORM pg_sleep(30); END IF; "
                    "RETURN NULL; END $$");
            co_await registry::sql(*c, "CREATE CONSTRAINT TRIGGER test_commit_hook AFTER INSERT ON "
                                       "object_versions DEFERRABLE INITIALLY DEFERRED FOR EACH ROW "
                                       "EXECUTE FUNCTION test_commit_hook()");
        }

        // Refused: PostgreSQL answered with an error, so nothing committed and the blob goes now.
        std::string refused_state = "none";
        try {
            co_await f.put("refused", content(4000, 'r'));
        } catch (const pg::error& e) {
            refused_state = e.sqlstate();
        }
        CHECK(refused_state == "P0001");
        CHECK(co_await f.stored_blobs() == 1);
        CHECK(co_await f.count("blobs") == 1);

        // Unanswered: the connection dies while COMMIT runs. Whether it committed is unknown to depotd, so
        // the blob stays (removing it could leave a committed version without its bytes).
        sleeper_killer killer;
        auto ex = co_await asio::this_coro::executor;
        asio::co_spawn(ex, terminate_sleepers(f, killer), [](std::exception_ptr e) {
            if (e)
                std::rethrow_exception(e);
        });
        std::string lost_state = "none";
        try {
            co_await f.put("unanswered", content(5000, 'u'));
        } catch (const pg::error& e) {
            lost_state = e.sqlstate();
        }
        killer.stop = true;
        asio::steady_timer timer(ex);
        while (!killer.finished) {
            timer.expires_after(std::chrono::milliseconds(10));
            co_await timer.async_wait(asio::use_awaitable);
        }
        REQUIRE(killer.killed);
        CHECK(lost_state.empty());
        CHECK(co_await f.stored_blobs() == 2);
        // Here the hook aborted the commit: no row names the blob, and the collector takes it after the
        // grace.
        CHECK(co_await f.count("object_versions") == 1);
        const auto later = std::chrono::system_clock::now() + std::chrono::seconds(1);
        auto report = co_await registry::collect_unreachable_blobs(*f.pool, *f.faulty.store, later);
        CHECK(report.orphans == 1);
        CHECK(co_await f.stored_blobs() == 1);
        CHECK(co_await f.read("kept") == content(3000, 'k'));
    });
}

namespace {

/// Hands out `data` like string_source, but stops once `at` bytes are out and runs `pause` before the rest:
/// a client that pauses in the middle of its body while the cleanup runs.
class pausing_source final : public depot::byte_source
{
public:
    pausing_source(std::string data, std::size_t at, std::function<asio::awaitable<void>()> pause)
        : data_(std::move(data)), at_(at), pause_(std::move(pause))
    {}
    asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override
    {
        if (pos_ == at_ && !paused_) {
            paused_ = true;
            co_await pause_();
        }
        const std::size_t end = pos_ < at_ ? at_ : data_.size();
        auto n = std::min({buf.size(), std::size_t{100000}, end - pos_});
        std::memcpy(buf.data(), data_.data() + pos_, n);
        pos_ += n;
        co_return n;
    }

private:
    std::string data_;
    std::size_t at_;
    std::function<asio::awaitable<void>()> pause_;
    std::size_t pos_ = 0;
    bool paused_ = false;
};

asio::awaitable<result<registry::object_version>> put_from(object_fixture& f, std::string key,
                                                           depot::byte_source& body, std::uint64_t size)
{
    registry::put_object_request request{.target = &f.bucket,
                                         .key = std::move(key),
                                         .owner_id = "alice",
                                         .content_length = size,
                                         .body = &body};
    co_return co_await f.objects->put_object(registry::system_audit_context(), std::move(request));
}

/// A cleanup pass for which every blob is past the grace age.
asio::awaitable<registry::collection_report> collect_everything_old(object_fixture& f)
{
    co_return co_await registry::collect_unreachable_blobs(
        *f.pool, *f.faulty.store, std::chrono::system_clock::now() + std::chrono::hours(1));
}

} // namespace

TEST_CASE("issue 22 item 1: the collector never takes a piece of a body still arriving, however old")
{
    with_object_fixture([](object_fixture& f) -> asio::awaitable<void> {
        constexpr std::size_t seg = registry::dedup_segment_size;
        const auto data = content(2 * seg + 10, 'p');
        std::size_t seen_during_pause = 0;
        // Past the first 8 MiB (committed by then), the client pauses for longer than the grace age.
        pausing_source body(data, seg + 100000, [&]() -> asio::awaitable<void> {
            seen_during_pause = co_await f.stored_blobs();
            auto report = co_await collect_everything_old(f);
            CHECK(report.orphans == 0);
            // Nor does fsck count it as an orphan.
            auto checked = co_await registry::check_consistency(*f.pool, *f.faulty.store);
            CHECK(checked.orphans.empty());
        });
        auto put = co_await put_from(f, "slow", body, data.size());
        REQUIRE(put);
        CHECK(seen_during_pause == 1);
        CHECK(co_await f.read("slow") == data);
        CHECK(co_await f.stored_blobs() == 3);
        CHECK(co_await f.count("blobs") == 3);
        // Published: the intents gave way to the blob rows.
        CHECK(co_await f.count("blob_intents") == 0);
        auto again = co_await collect_everything_old(f);
        CHECK(again.orphans == 0);
        CHECK(co_await f.read("slow") == data);
    });
}

TEST_CASE("issue 22 item 1: the same holds for a part, and a failed body leaves no intent behind")
{
    with_object_fixture([](object_fixture& f) -> asio::awaitable<void> {
        constexpr std::size_t seg = registry::dedup_segment_size;
        registry::object_headers headers;
        auto upload =
            co_await f.multipart->create(registry::system_audit_context(), f.bucket, "mp", "alice", headers);
        REQUIRE(upload);
        const auto data = content(seg + 200000, 'q');
        pausing_source body(data, seg + 100000,
                            [&]() -> asio::awaitable<void> { co_await collect_everything_old(f); });
        registry::ingest_limits limits{.content_length = data.size()};
        auto part =
            co_await f.multipart->upload_part(registry::system_audit_context(), *upload, 1, body, limits);
        REQUIRE(part);
        std::vector<registry::completed_part_ref> listed{{1, part->etag, ""}};
        REQUIRE(co_await f.multipart->complete(registry::system_audit_context(), f.bucket.id, "mp",
                                               upload->upload_id, listed));
        CHECK(co_await f.read("mp") == data);
        CHECK(co_await f.count("blob_intents") == 0);

        // A body refused after its first piece had an intent: pieces and intents go.
        auto bad = co_await f.put("bad", content(2 * seg, 'b'), md5("not the body"));
        REQUIRE_FALSE(bad);
        CHECK(bad.error().code == errc::bad_digest);
        CHECK(co_await f.count("blob_intents") == 0);
        CHECK(co_await f.stored_blobs() == 2);
    });
}

TEST_CASE("issue 22 item 1: a body whose intents lapsed meanwhile is refused and leaves no version")
{
    with_object_fixture([](object_fixture& f) -> asio::awaitable<void> {
        constexpr std::size_t seg = registry::dedup_segment_size;
        const auto data = content(2 * seg + 10, 'l');
        // While the body pauses, its lease runs out (as if its depotd had lost the database for a minute)
        // and the cleanup takes the first piece.
        pausing_source body(data, seg + 100000, [&]() -> asio::awaitable<void> {
            {
                auto c = co_await f.pool->acquire();
                co_await registry::sql(*c,
                                       "UPDATE blob_intents SET expires_at = now() - interval '1 second'");
            }
            auto report = co_await collect_everything_old(f);
            CHECK(report.lapsed_intents == 1);
            CHECK(report.orphans == 1);
        });
        auto put = co_await put_from(f, "lapsed", body, data.size());
        REQUIRE_FALSE(put);
        CHECK(put.error().code == errc::internal);
        CHECK(co_await f.count("object_versions") == 0);
        CHECK(co_await f.count("blobs") == 0);
        CHECK(co_await f.count("blob_intents") == 0);
        CHECK(co_await f.stored_blobs() == 0);

        // Lapsing after the last piece, before the publish, is caught by the publish itself.
        const auto small = content(2 * seg, 'm');
        pausing_source late(small, small.size(), [&]() -> asio::awaitable<void> {
            auto c = co_await f.pool->acquire();
            co_await registry::sql(*c, "DELETE FROM blob_intents");
        });
        auto refused = co_await put_from(f, "late", late, small.size());
        REQUIRE_FALSE(refused);
        CHECK(refused.error().code == errc::internal);
        CHECK(co_await f.count("object_versions") == 0);
        CHECK(co_await f.count("blobs") == 0);
        CHECK(co_await f.stored_blobs() == 0);
    });
}

TEST_CASE("issue 22 item 1: intents of a crashed process lapse, live ones are renewed, and the collector "
          "acts on the lease only")
{
    with_object_fixture([](object_fixture& f) -> asio::awaitable<void> {
        const auto bytes = content(700, 'c');
        std::vector<std::string> ids;
        for (int i = 0; i < 3; ++i) {
            auto w = co_await f.faulty.store->create();
            REQUIRE(w);
            REQUIRE(co_await (*w)->write(std::as_bytes(std::span(bytes))));
            REQUIRE(co_await (*w)->commit());
            ids.push_back((*w)->id());
        }
        {
            auto c = co_await f.pool->acquire();
            // Ours, lapsed but renewed before the pass; a crashed process's, lapsed; a live one's.
            co_await registry::sql(*c,
                                   "INSERT INTO blob_intents (store_id, owner, upload, expires_at) VALUES "
                                   "($1, $4, 'u1', now() - interval '1 second'), "
                                   "($2, 'crashed', 'u2', now() - interval '1 second'), "
                                   "($3, 'alive', 'u3', now() + interval '1 minute')",
                                   ids[0], ids[1], ids[2], registry::intent_owner());
        }
        co_await registry::renew_intents(*f.pool);
        auto dry = co_await registry::collect_unreachable_blobs(
            *f.pool, *f.faulty.store, std::chrono::system_clock::now() + std::chrono::hours(1), true);
        CHECK(dry.orphans == 1);
        CHECK(co_await f.count("blob_intents") == 3);
        auto report = co_await collect_everything_old(f);
        CHECK(report.lapsed_intents == 1);
        CHECK(report.orphans == 1);
        CHECK(co_await f.faulty.store->stat(ids[0]));
        CHECK_FALSE(co_await f.faulty.store->stat(ids[1]));
        CHECK(co_await f.faulty.store->stat(ids[2]));
        CHECK(co_await f.count("blob_intents") == 2);
    });
}

TEST_CASE("issue 22 item 10: UploadPartCopy from a version deleted since it was opened is NoSuchKey and "
          "stores no part")
{
    with_object_fixture([](object_fixture& f) -> asio::awaitable<void> {
        registry::object_headers headers;
        auto upload = co_await f.multipart->create(registry::system_audit_context(), f.bucket, "target",
                                                   "alice", headers);
        REQUIRE(upload);
        // Shared content: the source's blob outlives the source (another key holds it), so the bytes
        // still read and only the lock on the source's version can tell that it is gone.
        const auto shared = content(6000, 's');
        REQUIRE(co_await f.put("source", shared));
        REQUIRE(co_await f.put("other", shared));
        auto opened = co_await f.objects->open_object(f.bucket.id, "source");
        REQUIRE(opened);
        REQUIRE(co_await f.objects->delete_object(registry::system_audit_context(), f.bucket.id, "source"));
        auto part = co_await f.multipart->copy_part(registry::system_audit_context(), *upload, 1, *opened, 0,
                                                    shared.size());
        REQUIRE_FALSE(part);
        CHECK(part.error().code == errc::no_such_key);

        // Unique content: the delete removed the blob too, so the read fails; still NoSuchKey.
        const auto unique = content(7000, 'v');
        REQUIRE(co_await f.put("alone", unique));
        auto alone = co_await f.objects->open_object(f.bucket.id, "alone");
        REQUIRE(alone);
        REQUIRE(co_await f.objects->delete_object(registry::system_audit_context(), f.bucket.id, "alone"));
        auto gone = co_await f.multipart->copy_part(registry::system_audit_context(), *upload, 2, *alone, 0,
                                                    unique.size());
        REQUIRE_FALSE(gone);
        CHECK(gone.error().code == errc::no_such_key);
        CHECK(co_await f.count("multipart_parts") == 0);

        // A source still there copies, and the part keeps its bytes after the source goes.
        auto kept = co_await f.objects->open_object(f.bucket.id, "other");
        REQUIRE(kept);
        auto copied = co_await f.multipart->copy_part(registry::system_audit_context(), *upload, 1, *kept, 0,
                                                      shared.size());
        REQUIRE(copied);
        REQUIRE(co_await f.objects->delete_object(registry::system_audit_context(), f.bucket.id, "other"));
        std::vector<registry::completed_part_ref> listed{{1, copied->etag, ""}};
        REQUIRE(co_await f.multipart->complete(registry::system_audit_context(), f.bucket.id, "target",
                                               upload->upload_id, listed));
        CHECK(co_await f.read("target") == shared);
    });
}

TEST_CASE("issue 22 item 10: UploadPartCopy refuses to copy more than 5 GiB")
{
    with_object_fixture([](object_fixture& f) -> asio::awaitable<void> {
        registry::object_headers headers;
        auto upload = co_await f.multipart->create(registry::system_audit_context(), f.bucket, "target",
                                                   "alice", headers);
        REQUIRE(upload);
        REQUIRE(co_await f.put("source", content(6000, 's')));
        auto opened = co_await f.objects->open_object(f.bucket.id, "source");
        REQUIRE(opened);
        // The cap is on the bytes copied, checked before any is read: a handle that claims more will do.
        auto big = *opened;
        const std::uint64_t cap = 5ull << 30;
        big.version.size = cap + 1;
        big.segments[0].length = cap + 1;
        auto part =
            co_await f.multipart->copy_part(registry::system_audit_context(), *upload, 1, big, 0, cap + 1);
        REQUIRE_FALSE(part);
        CHECK(part.error().code == errc::invalid_request);
        CHECK(part.error().message == "The specified copy source is larger than the maximum allowable size "
                                      "for a copy source: 5368709120");
        CHECK(co_await f.count("multipart_parts") == 0);
    });
}
