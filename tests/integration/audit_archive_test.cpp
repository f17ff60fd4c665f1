#include "common/http_date.hpp"
#include "common/json.hpp"
#include "integration/test_db.hpp"
#include "registry/repo/audit.hpp"
#include "registry/repo/bucket_repository.hpp"
#include "registry/repo/identity_repository.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/service/audit_archive.hpp"
#include "registry/service/object_service.hpp"
#include "storage/faulty/faulty_blob_store.hpp"
#include "storage/memory/memory_blob_store.hpp"

#include <boost/asio/this_coro.hpp>
#include <chrono>
#include <doctest/doctest.h>

using namespace depot;
namespace asio = boost::asio;

namespace {

/// A migrated database with a user, an archive bucket and a few audit rows, over a faulty memory store.
struct archive_fixture
{
    test::test_database db{{.migrate = true}};
    storage::faulty_blob_store faulty = storage::make_faulty_blob_store(storage::make_memory_blob_store());
    std::shared_ptr<pg::pool> pool;
    registry::bucket archive;

    asio::awaitable<void> start()
    {
        auto executor = co_await asio::this_coro::executor;
        pg::pool_options options{.conninfo = db.url()};
        pool = pg::make_pool(executor, options);
        registry::identity_repository ids(*pool, std::string(32, 'k'));
        registry::user alice{.id = "alice", .display_name = "Alice"};
        REQUIRE(co_await ids.create_user(registry::system_audit_context(), alice));
        registry::bucket_repository buckets(*pool);
        auto b = co_await buckets.create(registry::system_audit_context(), "archive", "alice", "us-east-1");
        REQUIRE(b);
        archive = *b;
        for (int i = 0; i < 5; ++i)
            co_await row("r" + std::to_string(i));
    }

    asio::awaitable<void> stop()
    {
        pool.reset();
        co_return;
    }

    asio::awaitable<void> row(std::string resource)
    {
        auto c = co_await pool->acquire();
        co_await c->execute("BEGIN");
        co_await registry::append_audit(*c, registry::system_audit_context(), "test.row", resource);
        co_await c->execute("COMMIT");
    }

    asio::awaitable<std::int64_t> scalar(std::string query)
    {
        auto c = co_await pool->acquire();
        auto rs = co_await registry::sql(*c, query);
        co_return rs[0].is_null(0) ? 0 : rs[0].i64(0);
    }

    /// Checks that no row was archived.
    asio::awaitable<void> unchanged(std::int64_t rows)
    {
        CHECK(co_await scalar("SELECT count(*) FROM audit_log") == rows);
        CHECK(co_await scalar("SELECT anchor_id FROM audit_head") == 0);
    }

    registry::audit_archive_request everything_until_now(std::string bucket = "archive") const
    {
        registry::audit_archive_request req;
        req.before = format_iso8601(std::chrono::system_clock::now() + std::chrono::milliseconds(1));
        req.bucket = std::move(bucket);
        return req;
    }

    asio::awaitable<std::string> read(std::string key)
    {
        registry::object_service objects(*pool, *faulty.store);
        auto h = co_await objects.open_object(archive.id, key);
        REQUIRE(h);
        auto src = objects.read(*h, 0, h->version.size);
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
};

template <class F>
void with_archive_fixture(F body)
{
    test::run([&]() -> asio::awaitable<void> {
        archive_fixture f;
        co_await f.start();
        co_await body(f);
        co_await f.stop();
    }());
}

} // namespace

TEST_CASE("archiving stores the rows as one object, then removes them with a row of its own, and the rest "
          "verifies")
{
    with_archive_fixture([](archive_fixture& f) -> asio::awaitable<void> {
        const std::int64_t last = co_await f.scalar("SELECT max(id) FROM audit_log");
        const auto req = f.everything_until_now();
        auto done = co_await registry::archive_audit_rows(registry::system_audit_context(), *f.pool,
                                                          *f.faulty.store, req);
        REQUIRE(done);
        CHECK_FALSE(done->busy);
        CHECK(done->first_row == 1);
        CHECK(done->last_row == last);
        CHECK(done->archived == last);
        CHECK(done->key == "audit/audit-1-" + std::to_string(last) + ".jsonl");
        CHECK(co_await f.scalar("SELECT count(*) FROM audit_log WHERE id <= " + std::to_string(last)) == 0);
        // The object holds every archived row, chained.
        const std::string document = co_await f.read(done->key);
        std::vector<boost::json::value> lines;
        for (std::size_t at = 0; at < document.size();) {
            const auto end = document.find('\n', at);
            lines.push_back(boost::json::parse(document.substr(at, end - at)));
            at = end + 1;
        }
        REQUIRE(lines.size() == static_cast<std::size_t>(last));
        for (std::size_t i = 1; i < lines.size(); ++i)
            CHECK(lines[i].at("prev_hash") == lines[i - 1].at("hash"));
        CHECK(lines.back().at("resource").as_string() == "r4");
        // The run's own row (actor "system": no request) follows the object's put.
        auto c = co_await f.pool->acquire();
        auto rs = co_await registry::sql(
            *c, "SELECT actor, resource, details->>'rows' FROM audit_log WHERE action = 'audit.archive'");
        REQUIRE(rs.size() == 1);
        CHECK(rs[0].str(0) == "system");
        CHECK(rs[0].str(1) == "archive/" + done->key);
        CHECK(rs[0].str(2) == std::to_string(last));
        auto v = co_await registry::verify_audit(*f.pool);
        CHECK_FALSE(v.bad_row);
        CHECK(v.anchor_id == last);
        // Nothing left before the same cut.
        auto again = co_await registry::archive_audit_rows(registry::system_audit_context(), *f.pool,
                                                           *f.faulty.store, req);
        REQUIRE(again);
        CHECK(again->archived == 0);
        CHECK(again->key.empty());
    });
}

TEST_CASE("max_rows takes the oldest rows and leaves the rest for the next run")
{
    with_archive_fixture([](archive_fixture& f) -> asio::awaitable<void> {
        auto req = f.everything_until_now();
        req.max_rows = 2;
        auto first = co_await registry::archive_audit_rows(registry::system_audit_context(), *f.pool,
                                                           *f.faulty.store, req);
        REQUIRE(first);
        CHECK(first->archived == 2);
        CHECK(first->last_row == 2);
        auto second = co_await registry::archive_audit_rows(registry::system_audit_context(), *f.pool,
                                                            *f.faulty.store, req);
        REQUIRE(second);
        CHECK(second->first_row == 3);
        CHECK(second->last_row == 4);
        auto v = co_await registry::verify_audit(*f.pool);
        CHECK_FALSE(v.bad_row);
    });
}

TEST_CASE(
    "a failed archive leaves every row: missing bucket, failing store, broken chain, lock held elsewhere")
{
    with_archive_fixture([](archive_fixture& f) -> asio::awaitable<void> {
        const std::int64_t rows = co_await f.scalar("SELECT count(*) FROM audit_log");

        auto missing =
            co_await registry::archive_audit_rows(registry::system_audit_context(), *f.pool, *f.faulty.store,
                                                  f.everything_until_now("no-such-bucket"));
        REQUIRE_FALSE(missing);
        CHECK(missing.error().code == errc::no_such_bucket);
        co_await f.unchanged(rows);
        // The failed run gave the archive lock back before it returned, so a run right after it cannot find
        // the lock held and answer "busy". That happened once under load, when the pool rolled the
        // transaction back in the background. This check does not reproduce the race; it holds the guarantee.
        CHECK(co_await f.scalar("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted") ==
              0);

        f.faulty.faults->fail_all(errc::unavailable);
        auto refused = co_await registry::archive_audit_rows(registry::system_audit_context(), *f.pool,
                                                             *f.faulty.store, f.everything_until_now());
        f.faulty.faults->heal();
        REQUIRE_FALSE(refused);
        CHECK(refused.error().message.find("cannot write s3://archive/audit/audit-1-") == 0);
        co_await f.unchanged(rows);

        registry::audit_archive_request bad_time_request;
        bad_time_request.before = "not-a-time";
        bad_time_request.bucket = "archive";
        auto bad_time = co_await registry::archive_audit_rows(registry::system_audit_context(), *f.pool,
                                                              *f.faulty.store, bad_time_request);
        REQUIRE_FALSE(bad_time);
        CHECK(bad_time.error().code == errc::invalid_argument);
        co_await f.unchanged(rows);

        {
            auto other = co_await f.pool->acquire();
            co_await other->execute("BEGIN");
            co_await registry::sql(*other, "SELECT pg_advisory_xact_lock($1)",
                                   static_cast<std::int64_t>(0x6465706f74617263));
            auto busy = co_await registry::archive_audit_rows(registry::system_audit_context(), *f.pool,
                                                              *f.faulty.store, f.everything_until_now());
            REQUIRE(busy);
            CHECK(busy->busy);
            co_await other->execute("ROLLBACK");
        }
        co_await f.unchanged(rows);

        auto c = co_await f.pool->acquire();
        co_await c->execute("ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update; UPDATE audit_log SET "
                            "actor = 'mallory' WHERE id = 3; ALTER TABLE audit_log ENABLE TRIGGER "
                            "audit_log_no_update");
        auto tampered = co_await registry::archive_audit_rows(registry::system_audit_context(), *f.pool,
                                                              *f.faulty.store, f.everything_until_now());
        REQUIRE_FALSE(tampered);
        CHECK(tampered.error().code == errc::conflict);
        CHECK(tampered.error().message.find("FAILED at row 3") != std::string::npos);
        co_await f.unchanged(rows);
    });
}
