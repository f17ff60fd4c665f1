#pragma once
/// \file
/// Databases for integration tests. DEPOT_TEST_DATABASE_URL names a PostgreSQL server (e.g.
/// postgresql://depot@127.0.0.1:5432/depot, as printed by `scripts/pg-dev start <dir>`); every
/// `test_database` is a fresh, uniquely named database on it, dropped when the object goes away, so test
/// cases and test binaries running in parallel never see each other's rows. Without the variable, the test
/// case that asks for a database fails (it never passes silently).
///
///     TEST_CASE("a bucket can be created") {
///         test::test_database db({.migrate = true});  // or test::shared_database() for one per binary
///         test::run([&]() -> asio::awaitable<void> {
///             auto ex = co_await asio::this_coro::executor;  // not inside the make_pool call: GCC 12
///             auto pool = pg::make_pool(ex, {.conninfo = db.url()}); // breaks braced temporaries there

///             auto conn = co_await pool->acquire();
///             ...
///         });
///     }

#include "registry/pg/pg.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

namespace depot::test {

namespace asio = boost::asio;

/// The server URL from DEPOT_TEST_DATABASE_URL; fails the current test case when it is unset or empty.
std::string server_url();

/// `url` with its database replaced by `dbname`. Accepts URIs (postgresql://...) and key=value strings.
std::string with_database(std::string_view url, std::string_view dbname);

struct test_database_options
{
    /// Apply the embedded migrations (schema/*.sql), so the database has the full schema. The migrated
    /// schema is built once per test binary and copied (CREATE DATABASE ... TEMPLATE), which is fast.
    bool migrate = false;
};

/// A fresh database named depot_test_<pid>_<n>_<random>. Not thread-safe to create concurrently from the
/// same binary's test threads (doctest runs test cases sequentially).
class test_database
{
public:
    explicit test_database(test_database_options options = {});
    /// Drops the database, disconnecting whatever is still connected (DROP DATABASE ... WITH (FORCE)).
    /// Never throws; a failure to drop is printed.
    ~test_database();
    test_database(const test_database&) = delete;
    test_database& operator=(const test_database&) = delete;

    const std::string& name() const noexcept { return name_; }
    /// Connection string for this database (same form as DEPOT_TEST_DATABASE_URL).
    const std::string& url() const noexcept { return url_; }

private:
    std::string name_;
    std::string url_;
};

/// One migrated database shared by every test case of this binary that asks for it: created on first use,
/// dropped at exit. For suites whose test cases cannot interfere (e.g. each uses its own names).
const test_database& shared_database();

/// A new connection to `db`.
asio::awaitable<std::unique_ptr<pg::connection>> connect(const test_database& db);

/// Runs `task` to completion on a fresh io_context served by `threads` threads; returns its value or
/// rethrows its exception. Also waits for work the task left behind (e.g. a pool's rollbacks).
template <class T>
T run(asio::awaitable<T> task, int threads = 1)
{
    asio::io_context ctx(threads);
    auto result = asio::co_spawn(ctx, std::move(task), asio::use_future);
    std::vector<std::thread> helpers;
    for (int i = 1; i < threads; ++i)
        helpers.emplace_back([&ctx] { ctx.run(); });
    ctx.run();
    for (auto& t : helpers)
        t.join();
    return result.get();
}

/// `run(fn())` for a callable returning an awaitable; the callable (and its captures) outlives the task:
/// `test::run([&]() -> asio::awaitable<void> { ... });`
template <class F>
requires std::is_invocable_v<F&>
auto run(F&& fn, int threads = 1)
{
    return run(fn(), threads);
}

} // namespace depot::test
