#include "registry/pg/pg.hpp"
#include "test_db.hpp"

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <doctest/doctest.h>
#include <limits>
#include <mutex>
#include <thread>

namespace {

namespace asio = boost::asio;
namespace pg = depot::pg;
namespace test = depot::test;
using namespace std::chrono_literals;
using asio::use_awaitable;

/// Builds a parameter list outside any co_await expression. GCC 12 miscompiles braced initializers of
/// temporaries inside co_await expressions (double frees), so tests never write `pg::bytes{...}` there.
template <class... Args>
std::vector<pg::param> params(const Args&... args)
{
    std::vector<pg::param> out;
    out.reserve(sizeof...(Args));
    (out.emplace_back(args), ...);
    return out;
}

asio::awaitable<void> sleep_for(std::chrono::milliseconds d)
{
    asio::steady_timer t(co_await asio::this_coro::executor);
    t.expires_after(d);
    co_await t.async_wait(use_awaitable);
}

asio::awaitable<std::int64_t> backend_pid(pg::connection& c)
{
    auto rs = co_await c.query("SELECT pg_backend_pid()");
    co_return rs[0].i64(0);
}

/// Terminates a backend from a separate connection and waits until its process is gone, so the client side
/// has received everything the server will ever send it.
asio::awaitable<void> terminate_backend(const test::test_database& db, std::int64_t pid)
{
    auto admin = co_await test::connect(db);
    auto done = co_await admin->query("SELECT pg_terminate_backend($1)", params(pid));
    REQUIRE(done[0].boolean(0));
    for (int i = 0; i < 500; ++i) {
        auto rs = co_await admin->query("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", params(pid));
        if (rs[0].i64(0) == 0)
            co_return;
        co_await sleep_for(10ms);
    }
    FAIL("backend " << pid << " did not exit");
}

std::string all_byte_values()
{
    std::string s(256, '\0');
    for (int i = 0; i < 256; ++i)
        s[static_cast<std::size_t>(i)] = static_cast<char>(i);
    return s;
}

} // namespace

TEST_CASE("a connection runs a simple query and reports rows, columns and affected counts")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        CHECK(c->healthy());
        CHECK_FALSE(c->in_transaction());

        auto rs = co_await c->query("SELECT 1 + 1 AS two, 'x' AS letter");
        REQUIRE(rs.size() == 1);
        CHECK(rs.columns() == 2);
        CHECK(rs[0].i64(0) == 2);
        CHECK(rs[0].str(1) == "x");

        co_await c->execute("CREATE TABLE t (id bigint PRIMARY KEY, note text)");
        auto inserted = co_await c->query("INSERT INTO t SELECT g, 'n' FROM generate_series(1, 5) g");
        CHECK(inserted.affected() == 5);
        CHECK(inserted.empty());
        auto all = co_await c->query("SELECT id FROM t ORDER BY id");
        std::vector<std::int64_t> ids;
        for (auto r : all)
            ids.push_back(r.i64(0));
        CHECK(ids == std::vector<std::int64_t>{1, 2, 3, 4, 5});
        CHECK_THROWS_AS(all[0].i64(1), std::out_of_range);
        CHECK_THROWS_AS(all[5].i64(0), std::out_of_range);
    });
}

TEST_CASE("parameters of every type round-trip, NULL included")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        std::optional<std::string> none;
        std::optional<std::int64_t> some = 42;
        const pg::bytes two_bytes{std::string("\0z", 2)}; // not in the co_await expression: see params()
        auto rs = co_await c->query("SELECT $1::text, $2::bigint, $3::bigint, $4::int, $5::boolean, "
                                    "$6::boolean, $7::numeric, $8::text, "
                                    "$9::bigint, $10::bytea, $11::text",
                                    params(std::string_view("view"), std::numeric_limits<std::int64_t>::min(),
                                           std::numeric_limits<std::int64_t>::max(), std::int32_t{-7}, true,
                                           false, std::numeric_limits<std::uint64_t>::max(), none, some,
                                           two_bytes, std::nullopt));
        auto r = rs[0];
        CHECK(r.str(0) == "view");
        CHECK(r.i64(1) == std::numeric_limits<std::int64_t>::min());
        CHECK(r.i64(2) == std::numeric_limits<std::int64_t>::max());
        CHECK(r.i64(3) == -7);
        CHECK(r.boolean(4));
        CHECK_FALSE(r.boolean(5));
        CHECK(r.str(6) == "18446744073709551615");
        CHECK(r.is_null(7));
        CHECK(r.text(7).empty());
        CHECK(r.opt_str(7) == std::nullopt);
        CHECK(r.opt_i64(8) == 42);
        CHECK(r.bytea(9) == std::string("\0z", 2));
        CHECK(r.is_null(10));
        CHECK(r.opt_bytea(10) == std::nullopt);
        CHECK(r.opt_boolean(4) == true);
        CHECK_THROWS_AS(r.i64(0), pg::error);
        CHECK_THROWS_AS(r.boolean(0), pg::error);
    });
}

TEST_CASE("unicode text round-trips unchanged")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        const std::string text = "Grüße, 世界 — 🚀 \u00e9\u0301 tab\there";
        auto rs =
            co_await c->query("SELECT $1::text, length($1::text), octet_length($1::text)", params(text));
        CHECK(rs[0].str(0) == text);
        CHECK(rs[0].i64(1) == 25);
        CHECK(rs[0].i64(2) == static_cast<std::int64_t>(text.size()));
    });
}

TEST_CASE("bytea carries all 256 byte values both ways, also through a table and in large values")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        const pg::bytes raw{all_byte_values()};
        auto echo = co_await c->query("SELECT $1::bytea, length($1::bytea)", params(raw));
        CHECK(echo[0].i64(1) == 256);
        CHECK(echo[0].bytea(0) == raw.data);

        co_await c->execute("CREATE TABLE blobs (id int PRIMARY KEY, data bytea NOT NULL)");
        co_await c->query("INSERT INTO blobs VALUES (1, $1)", params(raw));
        auto stored = co_await c->query("SELECT data, get_byte(data, 0), get_byte(data, 255) FROM blobs");
        CHECK(stored[0].bytea(0) == raw.data);
        CHECK(stored[0].i64(1) == 0);
        CHECK(stored[0].i64(2) == 255);

        // Larger than the socket buffers: exercises partial flushes while the server answers.
        std::string big_data;
        for (int i = 0; i < 32 * 1024; ++i)
            big_data += raw.data;
        const pg::bytes big(std::move(big_data));
        auto large = co_await c->query("SELECT $1::bytea, md5($1::bytea)", params(big));
        CHECK(large[0].bytea(0) == big.data);
        CHECK(large[0].str(1).size() == 32);
    });
}

TEST_CASE("SQL errors carry their SQLSTATE and leave the connection usable")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        co_await c->execute("CREATE TABLE u (k text PRIMARY KEY)");
        co_await c->query("INSERT INTO u VALUES ($1)", params("a"));
        try {
            co_await c->query("INSERT INTO u VALUES ($1)", params("a"));
            FAIL("expected a unique violation");
        } catch (const pg::error& e) {
            CHECK(e.sqlstate() == "23505");
            CHECK(e.is_unique_violation());
            CHECK(std::string(e.what()).find("duplicate key") != std::string::npos);
        }
        try {
            co_await c->query("SELEC 1");
            FAIL("expected a syntax error");
        } catch (const pg::error& e) {
            CHECK(e.sqlstate() == "42601");
        }
        try {
            co_await c->execute("SELECT 1; SELEC 2");
            FAIL("expected a syntax error");
        } catch (const pg::error& e) {
            CHECK(e.sqlstate() == "42601");
        }
        CHECK(c->healthy());
        auto rs = co_await c->query("SELECT count(*) FROM u");
        CHECK(rs[0].i64(0) == 1);
    });
}

TEST_CASE("execute runs several statements and reports the first error only after reading all results")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        co_await c->execute("CREATE TABLE m (v int); INSERT INTO m VALUES (1); INSERT INTO m VALUES (2)");
        auto rs = co_await c->query("SELECT sum(v) FROM m");
        CHECK(rs[0].i64(0) == 3);
        // One implicit transaction: the division by zero undoes the insert before it.
        CHECK_THROWS_AS(
            co_await c->execute("INSERT INTO m VALUES (10); SELECT 1 / 0; INSERT INTO m VALUES (20)"),
            pg::error);
        CHECK(c->healthy());
        CHECK_FALSE(c->in_transaction());
        rs = co_await c->query("SELECT sum(v) FROM m");
        CHECK(rs[0].i64(0) == 3);
    });
}

TEST_CASE("a statement is prepared once per connection and reused")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        for (std::int32_t i = 0; i < 3; ++i) {
            auto rs = co_await c->query("SELECT $1::int * 2", params(i));
            CHECK(rs[0].i64(0) == 2 * i);
        }
        auto stats = co_await c->query("SELECT count(*), sum(generic_plans + custom_plans) FROM "
                                       "pg_prepared_statements WHERE statement = 'SELECT $1::int * 2'");
        CHECK(stats[0].i64(0) == 1);
        CHECK(stats[0].i64(1) == 3);

        // DISCARD ALL drops server-side statements; the cache notices and prepares again.
        co_await c->execute("DISCARD ALL");
        auto again = co_await c->query("SELECT $1::int * 2", params(std::int32_t{21}));
        CHECK(again[0].i64(0) == 42);
    });
}

TEST_CASE("in_transaction follows BEGIN, a failed statement and ROLLBACK")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        co_await c->execute("BEGIN");
        CHECK(c->in_transaction());
        CHECK_THROWS_AS(co_await c->query("SELECT 1 / 0"), pg::error);
        CHECK(c->in_transaction());
        try {
            co_await c->query("SELECT 1");
            FAIL("expected in_failed_sql_transaction");
        } catch (const pg::error& e) {
            CHECK(e.sqlstate() == "25P02");
        }
        co_await c->execute("ROLLBACK");
        CHECK_FALSE(c->in_transaction());
        CHECK(c->healthy());
    });
}

TEST_CASE("deferred statements run ahead of the next command, in order, in one round trip")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        co_await c->execute("CREATE TABLE d (n serial, v text)");
        c->defer("BEGIN");
        c->defer("INSERT INTO d (v) VALUES ($1)", params("a"));
        c->defer("INSERT INTO d (v) VALUES ($1)", params("b"));
        // Nothing was sent yet: another connection sees no transaction and no rows.
        auto other = co_await test::connect(db);
        auto seen = co_await other->query("SELECT count(*) FROM d");
        CHECK(seen[0].i64(0) == 0);
        CHECK_FALSE(c->in_transaction());
        // The next command carries them and returns its own rows, which see theirs.
        auto rs = co_await c->query("SELECT string_agg(v, ',' ORDER BY n) FROM d");
        CHECK(rs[0].str(0) == "a,b");
        CHECK(c->in_transaction());
        // COMMIT carries a deferred statement too.
        c->defer("INSERT INTO d (v) VALUES ($1)", params("c"));
        co_await c->query("COMMIT");
        CHECK_FALSE(c->in_transaction());
        seen = co_await other->query("SELECT string_agg(v, ',' ORDER BY n) FROM d");
        CHECK(seen[0].str(0) == "a,b,c");
        // Each statement stays prepared: a second transaction of the same texts prepares nothing new.
        auto before = co_await c->query("SELECT count(*) FROM pg_prepared_statements");
        c->defer("BEGIN");
        c->defer("INSERT INTO d (v) VALUES ($1)", params("d"));
        co_await c->query("COMMIT");
        auto after = co_await c->query("SELECT count(*) FROM pg_prepared_statements");
        CHECK(after[0].i64(0) == before[0].i64(0));
        // execute() (simple protocol) sends the deferred ones first.
        c->defer("INSERT INTO d (v) VALUES ($1)", params("e"));
        co_await c->execute("SELECT 1");
        seen = co_await other->query("SELECT count(*) FROM d");
        CHECK(seen[0].i64(0) == 5);
    });
}

TEST_CASE("the first deferred error is thrown by the next command, which does not run")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        co_await c->execute("CREATE TABLE f (v int PRIMARY KEY)");
        c->defer("BEGIN");
        c->defer("INSERT INTO f VALUES (1)");
        c->defer("INSERT INTO f VALUES (1)"); // unique violation
        c->defer("SELECT 1 / 0");             // skipped: the pipeline is aborted
        try {
            co_await c->query("INSERT INTO f VALUES (2)");
            FAIL("expected the unique violation");
        } catch (const pg::error& e) {
            CHECK(e.is_unique_violation());
        }
        CHECK(c->healthy());
        CHECK(c->in_transaction()); // the failed transaction block
        co_await c->execute("ROLLBACK");
        auto rs = co_await c->query("SELECT count(*) FROM f");
        CHECK(rs[0].i64(0) == 0);
        // A syntax error in a deferred statement (found when preparing it) is reported the same way.
        c->defer("INSERT INTO f VALUE (3)");
        try {
            co_await c->query("SELECT 1");
            FAIL("expected a syntax error");
        } catch (const pg::error& e) {
            CHECK(e.sqlstate() == "42601");
        }
        // Nothing is left queued after a failure.
        rs = co_await c->query("SELECT count(*) FROM f");
        CHECK(rs[0].i64(0) == 0);
    });
}

TEST_CASE(
    "query_all runs its statements behind the deferred ones in one round trip and returns each one's rows")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        co_await c->execute("CREATE TABLE q (n serial, v text UNIQUE)");
        c->defer("BEGIN");
        c->defer("INSERT INTO q (v) VALUES ($1)", params("a"));
        std::vector<pg::statement> batch;
        batch.push_back(pg::statement{"INSERT INTO q (v) VALUES ($1) RETURNING n", params("b")});
        batch.push_back(pg::statement{"SELECT string_agg(v, ',' ORDER BY n) FROM q", {}});
        batch.push_back(pg::statement{"SELECT $1::int + 1", params(std::int64_t{41})});
        auto results = co_await c->query_all(std::move(batch));
        REQUIRE(results.size() == 3);
        CHECK(results[0][0].i64(0) == 2);
        CHECK(results[1][0].str(0) == "a,b");
        CHECK(results[2][0].i64(0) == 42);
        CHECK(c->in_transaction());
        co_await c->execute("COMMIT");
        std::vector<pg::statement> none;
        CHECK((co_await c->query_all(std::move(none))).empty()); // nothing to send: no round trip

        // The first error is thrown after everything was read; the statements after it did not run.
        std::vector<pg::statement> failing;
        failing.push_back(pg::statement{"BEGIN", {}});
        failing.push_back(pg::statement{"INSERT INTO q (v) VALUES ($1)", params("c")});
        failing.push_back(pg::statement{"INSERT INTO q (v) VALUES ($1)", params("a")}); // unique violation
        failing.push_back(pg::statement{"INSERT INTO q (v) VALUES ($1)", params("d")});
        try {
            co_await c->query_all(std::move(failing));
            FAIL("expected the unique violation");
        } catch (const pg::error& e) {
            CHECK(e.is_unique_violation());
        }
        CHECK(c->healthy());
        co_await c->execute("ROLLBACK");
        auto rs = co_await c->query("SELECT string_agg(v, ',' ORDER BY n) FROM q");
        CHECK(rs[0].str(0) == "a,b");
    });
}

TEST_CASE("deferred statements of a returned connection are dropped, never run for the next borrower")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto pool = pg::make_pool(ex, {.conninfo = db.url(), .max_connections = 1});
        {
            auto c = co_await pool->acquire();
            co_await c->execute("CREATE TABLE g (v int)");
        }
        {
            auto c = co_await pool->acquire();
            c->defer("BEGIN");
            c->defer("INSERT INTO g VALUES (1)");
            c->discard_deferred();
            CHECK_FALSE(c->in_transaction()); // a BEGIN never sent needs no ROLLBACK
        }
        {
            auto c = co_await pool->acquire();
            c->defer("INSERT INTO g VALUES (2)");
        } // returned with a statement queued
        auto c = co_await pool->acquire();
        auto rs = co_await c->query("SELECT count(*) FROM g");
        CHECK(rs[0].i64(0) == 0);
        CHECK(pool->stats().open == 1);
    });
}

TEST_CASE("a terminated connection fails with an empty SQLSTATE and is no longer healthy")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        co_await terminate_backend(db, co_await backend_pid(*c));
        try {
            co_await c->query("SELECT 1");
            FAIL("expected a connection error");
        } catch (const pg::error& e) {
            CHECK(e.sqlstate().empty());
        }
        CHECK_FALSE(c->healthy());
        CHECK_THROWS_AS(co_await c->execute("SELECT 1"), pg::error);
    });
}

TEST_CASE("connecting fails with a connection error when nothing listens or nothing answers in time")
{
    test::run([&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        // A port that was just free: connection refused.
        std::uint16_t closed_port = 0;
        {
            asio::ip::tcp::acceptor probe(ex, {asio::ip::make_address("127.0.0.1"), 0});
            closed_port = probe.local_endpoint().port();
        }
        try {
            co_await pg::connect(ex,
                                 "postgresql://depot@127.0.0.1:" + std::to_string(closed_port) + "/depot");
            FAIL("expected a connection error");
        } catch (const pg::error& e) {
            CHECK(e.sqlstate().empty());
        }

        // A listener that never answers the startup message: the timeout fires.
        asio::ip::tcp::acceptor silent(ex, {asio::ip::make_address("127.0.0.1"), 0});
        auto started = std::chrono::steady_clock::now();
        try {
            co_await pg::connect(
                ex,
                "postgresql://depot@127.0.0.1:" + std::to_string(silent.local_endpoint().port()) + "/depot",
                200ms);
            FAIL("expected a timeout");
        } catch (const pg::error& e) {
            CHECK(std::string(e.what()).find("timed out") != std::string::npos);
        }
        CHECK(std::chrono::steady_clock::now() - started < 5s);

        CHECK_THROWS_AS(co_await pg::connect(ex, "not a connection string"), pg::error);
    });
}

TEST_CASE("a query abandoned mid-flight marks its connection broken")
{
    using namespace asio::experimental::awaitable_operators;
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        auto started = std::chrono::steady_clock::now();
        auto winner = co_await (c->query("SELECT pg_sleep(10)") || sleep_for(100ms));
        CHECK(winner.index() == 1);
        CHECK(std::chrono::steady_clock::now() - started < 5s);
        CHECK_FALSE(c->healthy());
    });
}

TEST_CASE("the pool serves 200 concurrent coroutines on 4 threads with at most 8 connections")
{
    test::test_database db;
    asio::io_context ctx(4);
    auto pool = pg::make_pool(ctx.get_executor(), {.conninfo = db.url(), .max_connections = 8});
    std::atomic<int> succeeded{0};
    std::atomic<std::int64_t> most_open{0};
    std::atomic<std::int64_t> most_backends{0};
    std::mutex failures_mutex;
    std::vector<std::string> failures;
    auto raise = [](std::atomic<std::int64_t>& max, std::int64_t v) {
        auto seen = max.load();
        while (v > seen && !max.compare_exchange_weak(seen, v)) {
        }
    };

    for (std::int32_t i = 0; i < 200; ++i) {
        auto worker = [&, i]() -> asio::awaitable<void> {
            auto c = co_await pool->acquire();
            raise(most_open, static_cast<std::int64_t>(pool->stats().open));
            auto rs =
                co_await c->query("SELECT $1::int, pg_sleep(0.002), (SELECT count(*) FROM pg_stat_activity "
                                  "WHERE datname = current_database() AND application_name = 'depotd')",
                                  params(i));
            CHECK_EQ(rs[0].i64(0), i);
            raise(most_backends, rs[0].i64(2));
            ++succeeded;
        };
        asio::co_spawn(asio::make_strand(ctx), worker, [&](std::exception_ptr e) {
            if (!e)
                return;
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& ex) {
                std::lock_guard lock(failures_mutex);
                failures.push_back(ex.what());
            }
        });
    }
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] { ctx.run(); });
    for (auto& t : threads)
        t.join();

    CHECK(failures.empty());
    if (!failures.empty())
        MESSAGE("first failure: " << failures.front());
    CHECK(succeeded == 200);
    CHECK(most_open <= 8);
    CHECK(most_backends <= 8);
    CHECK(most_backends >= 2); // they did overlap
    auto s = pool->stats();
    CHECK(s.open <= 8);
    CHECK(s.idle == s.open);
    CHECK(s.waiting == 0);
}

TEST_CASE("acquire times out when every connection stays busy, and works again once one is returned")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto pool = pg::make_pool(ex, {.conninfo = db.url(), .max_connections = 1, .acquire_timeout = 100ms});
        auto held = co_await pool->acquire();
        auto started = std::chrono::steady_clock::now();
        try {
            co_await pool->acquire();
            FAIL("expected a timeout");
        } catch (const pg::error& e) {
            CHECK(e.sqlstate().empty());
            CHECK(std::string(e.what()).find("timed out") != std::string::npos);
        }
        CHECK(std::chrono::steady_clock::now() - started >= 100ms);
        CHECK(pool->stats().waiting == 0);
        CHECK(pool->stats().open == 1);

        held = pg::pooled_connection();
        auto again = co_await pool->acquire();
        auto rs = co_await again->query("SELECT 1");
        CHECK(rs[0].i64(0) == 1);
    });
}

TEST_CASE("waiters are served in the order they arrived")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto pool = pg::make_pool(ex, {.conninfo = db.url(), .max_connections = 1});
        auto held = std::make_unique<pg::pooled_connection>(co_await pool->acquire());
        std::vector<int> served;
        int finished = 0;
        for (int i = 0; i < 3; ++i) {
            asio::co_spawn(
                ex,
                [&, i]() -> asio::awaitable<void> {
                    auto c = co_await pool->acquire();
                    served.push_back(i);
                    co_await sleep_for(5ms);
                    ++finished;
                },
                asio::detached);
            co_await sleep_for(10ms); // arrive one after the other
        }
        CHECK(pool->stats().waiting == 3);
        held.reset();
        for (int i = 0; i < 1000 && finished < 3; ++i)
            co_await sleep_for(5ms);
        REQUIRE(finished == 3);
        CHECK(served == std::vector<int>{0, 1, 2});
    });
}

TEST_CASE("an acquire abandoned while waiting leaves no waiter behind and loses no connection")
{
    using namespace asio::experimental::awaitable_operators;
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto pool = pg::make_pool(ex, {.conninfo = db.url(), .max_connections = 1});
        auto held = std::make_unique<pg::pooled_connection>(co_await pool->acquire());
        auto winner = co_await (pool->acquire() || sleep_for(50ms));
        CHECK(winner.index() == 1);
        CHECK(pool->stats().waiting == 0);
        held.reset();
        CHECK(pool->stats().idle == 1);
        auto c = co_await pool->acquire();
        auto rs = co_await c->query("SELECT 1");
        CHECK(rs[0].i64(0) == 1);
    });
}

TEST_CASE("a connection returned inside a transaction is rolled back before anyone else gets it")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto pool = pg::make_pool(ex, {.conninfo = db.url(), .max_connections = 1});
        {
            auto c = co_await pool->acquire();
            co_await c->execute("CREATE TABLE r (v int)");
        }
        {
            auto c = co_await pool->acquire();
            co_await c->execute("BEGIN");
            co_await c->query("INSERT INTO r VALUES (1)");
            CHECK(c->in_transaction());
        } // returned without COMMIT
        {
            auto c = co_await pool->acquire();
            CHECK_FALSE(c->in_transaction());
            auto rs = co_await c->query("SELECT count(*) FROM r");
            CHECK(rs[0].i64(0) == 0);
            // A failed transaction is rolled back too.
            co_await c->execute("BEGIN");
            CHECK_THROWS_AS(co_await c->query("INSERT INTO r VALUES (1 / 0)"), pg::error);
        }
        auto c = co_await pool->acquire();
        CHECK_FALSE(c->in_transaction());
        auto rs = co_await c->query("SELECT count(*) FROM r");
        CHECK(rs[0].i64(0) == 0);
        CHECK(pool->stats().open == 1);
    });
}

TEST_CASE("a broken connection is discarded and the pool recovers")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto pool = pg::make_pool(ex, {.conninfo = db.url(), .max_connections = 2});

        // Broken while borrowed: the query fails, the pool drops it on return.
        std::int64_t first_pid = 0;
        {
            auto c = co_await pool->acquire();
            first_pid = co_await backend_pid(*c);
            co_await terminate_backend(db, first_pid);
            CHECK_THROWS_AS(co_await c->query("SELECT 1"), pg::error);
        }
        CHECK(pool->stats().open == 0);
        std::int64_t second_pid = 0;
        {
            auto c = co_await pool->acquire();
            second_pid = co_await backend_pid(*c);
            CHECK(second_pid != first_pid);
        }

        // Broken while idle: acquire notices and opens a new one, so the caller never sees the failure.
        CHECK(pool->stats().idle == 1);
        co_await terminate_backend(db, second_pid);
        {
            auto c = co_await pool->acquire();
            auto pid = co_await backend_pid(*c);
            CHECK(pid != second_pid);
        }
        CHECK(pool->stats().open == 1);
    });
}

TEST_CASE("a waiter gets the slot of a discarded connection and opens a new one")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto pool = pg::make_pool(ex, {.conninfo = db.url(), .max_connections = 1});
        auto held = std::make_unique<pg::pooled_connection>(co_await pool->acquire());
        auto broken_pid = co_await backend_pid(**held);
        std::int64_t waiter_pid = 0;
        bool served = false;
        asio::co_spawn(
            ex,
            [&]() -> asio::awaitable<void> {
                auto c = co_await pool->acquire();
                waiter_pid = co_await backend_pid(*c);
                served = true;
            },
            asio::detached);
        co_await sleep_for(20ms);
        CHECK(pool->stats().waiting == 1);
        co_await terminate_backend(db, broken_pid);
        CHECK_THROWS_AS(co_await (*held)->query("SELECT 1"), pg::error);
        held.reset(); // discarded: its slot goes to the waiter
        for (int i = 0; i < 1000 && !served; ++i)
            co_await sleep_for(5ms);
        REQUIRE(served);
        CHECK(waiter_pid != 0);
        CHECK(waiter_pid != broken_pid);
        CHECK(pool->stats().open == 1);
    });
}

TEST_CASE("a pooled connection whose query was abandoned is not reused")
{
    using namespace asio::experimental::awaitable_operators;
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto pool = pg::make_pool(ex, {.conninfo = db.url(), .max_connections = 1});
        {
            auto c = co_await pool->acquire();
            co_await (c->query("SELECT pg_sleep(10)") || sleep_for(50ms));
        }
        CHECK(pool->stats().open == 0);
        auto c = co_await pool->acquire();
        auto rs = co_await c->query("SELECT 7");
        CHECK(rs[0].i64(0) == 7);
    });
}

TEST_CASE("pooled connections can be moved and reassigned")
{
    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto pool = pg::make_pool(ex, {.conninfo = db.url(), .max_connections = 2});
        auto a = co_await pool->acquire();
        auto b = co_await pool->acquire();
        CHECK(pool->stats().idle == 0);
        a = std::move(b); // a's connection goes back
        CHECK(pool->stats().idle == 1);
        pg::pooled_connection c(std::move(a));
        auto rs = co_await c->query("SELECT 1");
        CHECK(rs[0].i64(0) == 1);
        CHECK(pool->stats().open == 2);
    });
}

TEST_CASE("test databases are fresh and their URL names them")
{
    CHECK(test::with_database("postgresql://u@h:5/db", "x") == "postgresql://u@h:5/x");
    CHECK(test::with_database("postgresql://u@h:5", "x") == "postgresql://u@h:5/x");
    CHECK(test::with_database("postgresql://u@h:5/db?sslmode=disable", "x") ==
          "postgresql://u@h:5/x?sslmode=disable");
    CHECK(test::with_database("postgresql://u@h:5?sslmode=disable", "x") ==
          "postgresql://u@h:5/x?sslmode=disable");
    CHECK(test::with_database("host=h port=5 dbname=db", "x") == "host=h port=5 dbname=db dbname=x");

    test::test_database db;
    test::run([&]() -> asio::awaitable<void> {
        auto c = co_await test::connect(db);
        auto rs =
            co_await c->query("SELECT current_database(), (SELECT count(*) FROM pg_tables WHERE schemaname = "
                              "'public')");
        CHECK(rs[0].str(0) == db.name());
        CHECK(rs[0].i64(1) == 0);
    });
}
