#include "common/hash.hpp"
#include "registry/pg/migrations.hpp"
#include "test_db.hpp"

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <doctest/doctest.h>
#include <thread>

namespace {

namespace asio = boost::asio;
namespace pg = depot::pg;
namespace test = depot::test;

const std::vector<pg::migration_source> two_migrations{
    {"0001_accounts.sql", "CREATE TABLE accounts (id bigint PRIMARY KEY, name text NOT NULL);"},
    {"0002_seed.sql", "CREATE TABLE events (id bigserial PRIMARY KEY, what text);\n"
                      "INSERT INTO accounts VALUES (1, 'root');\n"
                      "INSERT INTO events (what) VALUES ('seeded');"},
};

std::vector<pg::migration_source> first_only()
{
    return {two_migrations[0]};
}

asio::awaitable<std::int64_t> count(pg::connection& c, std::string_view sql)
{
    auto rs = co_await c.query(sql);
    co_return rs[0].i64(0);
}

} // namespace

TEST_CASE("a migration's version is the leading number of its file name")
{
    CHECK(pg::migration_version("0001_init.sql") == 1);
    CHECK(pg::migration_version("0042_more.sql") == 42);
    CHECK_THROWS_AS(pg::migration_version("init.sql"), std::invalid_argument);
    CHECK_THROWS_AS(pg::migration_version("0000_zero.sql"), std::invalid_argument);
}

TEST_CASE("migrations apply in order, each recorded with the SHA-256 of its SQL")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        auto status = co_await pg::migrate(*c, two_migrations);
        CHECK(status.current == 2);
        CHECK(status.latest == 2);
        CHECK_FALSE(c->in_transaction());

        auto rows =
            co_await c->query("SELECT version, name, checksum FROM schema_migrations ORDER BY version");
        REQUIRE(rows.size() == 2);
        for (int i = 0; i < 2; ++i) {
            CHECK(rows[i].i64(0) == i + 1);
            CHECK(rows[i].str(1) == two_migrations[static_cast<std::size_t>(i)].name);
            CHECK(rows[i].str(2) ==
                  depot::to_hex(depot::sha256(two_migrations[static_cast<std::size_t>(i)].sql)));
        }
        CHECK(co_await count(*c, "SELECT count(*) FROM accounts") == 1);
    });
}

TEST_CASE("running migrate again changes nothing")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        co_await pg::migrate(*c, two_migrations);
        auto applied_at =
            co_await c->query("SELECT applied_at::text FROM schema_migrations ORDER BY version");
        auto status = co_await pg::migrate(*c, two_migrations);
        CHECK(status.current == 2);
        CHECK(co_await count(*c, "SELECT count(*) FROM events") == 1);
        auto after = co_await c->query("SELECT applied_at::text FROM schema_migrations ORDER BY version");
        CHECK(after[0].str(0) == applied_at[0].str(0));
        CHECK(after[1].str(0) == applied_at[1].str(0));
    });
}

TEST_CASE("a new migration is applied on top of the applied ones")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        auto one = first_only();
        auto status = co_await pg::migrate(*c, one);
        CHECK(status.current == 1);
        CHECK(status.latest == 1);
        status = co_await pg::migrate(*c, two_migrations);
        CHECK(status.current == 2);
        CHECK(co_await count(*c, "SELECT count(*) FROM schema_migrations") == 2);
    });
}

TEST_CASE("an applied migration whose SQL changed is refused, naming the file")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        auto one = first_only();
        co_await pg::migrate(*c, one);
        auto edited = two_migrations;
        edited[0].sql += "\nCREATE INDEX ON accounts (name);";
        try {
            co_await pg::migrate(*c, edited);
            FAIL("expected a checksum mismatch");
        } catch (const pg::error& e) {
            std::string what = e.what();
            CHECK(what.find("0001_accounts.sql") != std::string::npos);
            CHECK(what.find("checksum") != std::string::npos);
        }
        // Nothing was applied, and the lock was released: the unedited list still migrates.
        CHECK(co_await count(*c, "SELECT count(*) FROM schema_migrations") == 1);
        auto status = co_await pg::migrate(*c, two_migrations);
        CHECK(status.current == 2);
    });
}

TEST_CASE("a database newer than the binary is refused")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        co_await pg::migrate(*c, two_migrations);
        auto older_binary = first_only();
        try {
            co_await pg::migrate(*c, older_binary);
            FAIL("expected the newer database to be refused");
        } catch (const pg::error& e) {
            CHECK(std::string(e.what()).find("newer") != std::string::npos);
        }
    });
}

TEST_CASE("a migration that is older than an applied one but missing is refused")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        std::vector<pg::migration_source> skipping{two_migrations[0],
                                                   {"0003_later.sql", "CREATE TABLE later (id int);"}};
        co_await pg::migrate(*c, skipping);
        std::vector<pg::migration_source> with_gap_filled{two_migrations[0], two_migrations[1], skipping[1]};
        CHECK_THROWS_AS(co_await pg::migrate(*c, with_gap_filled), pg::error);
    });
}

TEST_CASE("a failing migration leaves no trace, names its file and keeps the SQLSTATE")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        std::vector<pg::migration_source> broken{
            two_migrations[0], {"0002_broken.sql", "CREATE TABLE half (id int);\nCREAT TABLE x;"}};
        try {
            co_await pg::migrate(*c, broken);
            FAIL("expected the migration to fail");
        } catch (const pg::error& e) {
            CHECK(std::string(e.what()).find("0002_broken.sql") != std::string::npos);
            CHECK(e.sqlstate() == "42601");
        }
        CHECK_FALSE(c->in_transaction());
        auto state = co_await pg::migration_state(*c, broken);
        CHECK(state.current == 1);
        CHECK(co_await count(*c, "SELECT count(*) FROM pg_tables WHERE tablename = 'half'") == 0);
        auto status = co_await pg::migrate(*c, two_migrations);
        CHECK(status.current == 2);
    });
}

TEST_CASE("migration_state reports the versions without changing anything")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        auto before = co_await pg::migration_state(*c, two_migrations);
        CHECK(before.current == 0);
        CHECK(before.latest == 2);
        CHECK(co_await count(*c, "SELECT count(*) FROM pg_tables WHERE tablename = 'schema_migrations'") ==
              0);
        co_await pg::migrate(*c, two_migrations);
        auto after = co_await pg::migration_state(*c, two_migrations);
        CHECK(after.current == 2);
        CHECK(after.latest == 2);
    });
}

TEST_CASE("a migration list out of version order is rejected before touching the database")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        std::vector<pg::migration_source> reversed{two_migrations[1], two_migrations[0]};
        CHECK_THROWS_AS(co_await pg::migrate(*c, reversed), std::invalid_argument);
        std::vector<pg::migration_source> duplicate{two_migrations[0], {"0001_again.sql", "SELECT 1;"}};
        CHECK_THROWS_AS(co_await pg::migrate(*c, duplicate), std::invalid_argument);
        CHECK(co_await count(*c, "SELECT count(*) FROM pg_tables WHERE tablename = 'schema_migrations'") ==
              0);
    });
}

TEST_CASE("concurrent migrate calls serialize on the advisory lock and apply each migration once")
{
    test::test_database db;
    // The second migration holds the lock long enough for the others to queue up behind it.
    std::vector<pg::migration_source> slow{
        two_migrations[0], {"0002_slow.sql", "SELECT pg_sleep(0.3);\n" + two_migrations[1].sql}};
    asio::io_context ctx(4);
    std::atomic<int> succeeded{0};
    std::atomic<int> failed{0};
    for (int i = 0; i < 4; ++i) {
        asio::co_spawn(
            ctx,
            [&]() -> asio::awaitable<void> {
                auto c = co_await test::connect(db);
                auto status = co_await pg::migrate(*c, slow);
                if (status.current == 2 && status.latest == 2)
                    ++succeeded;
            },
            [&](std::exception_ptr e) {
                if (e)
                    ++failed;
            });
    }
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] { ctx.run(); });
    for (auto& t : threads)
        t.join();
    CHECK(succeeded == 4);
    CHECK(failed == 0);

    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        CHECK(co_await count(*c, "SELECT count(*) FROM schema_migrations") == 2);
        CHECK(co_await count(*c, "SELECT count(*) FROM events") == 1);
        CHECK(co_await count(*c, "SELECT count(*) FROM accounts") == 1);
        CHECK(co_await count(*c, "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
                                 "WHERE l.locktype = 'advisory' AND d.datname = current_database()") == 0);
    });
}

TEST_CASE("the embedded migrations apply to an empty database, and a second run is a no-op")
{
    REQUIRE_FALSE(pg::embedded_migrations().empty());
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        auto status = co_await pg::migrate(*c);
        CHECK(status.current == status.latest);
        CHECK(status.latest == pg::migration_version(pg::embedded_migrations().back().name));
        auto again = co_await pg::migrate(*c);
        CHECK(again.current == status.current);
        auto state = co_await pg::migration_state(*c);
        CHECK(state.current == status.latest);
    });
}

TEST_CASE("migrated test databases, private or shared, already have the embedded schema")
{
    const test::test_database db({.migrate = true});
    for (const auto* each : {&db, &test::shared_database()}) {
        test::run([&]() -> asio::awaitable<void> {
            auto c = co_await test::connect(*each);
            auto state = co_await pg::migration_state(*c);
            CHECK(state.current == state.latest);
            CHECK(state.current > 0);
        });
    }
    CHECK(db.name() != test::shared_database().name());
}
