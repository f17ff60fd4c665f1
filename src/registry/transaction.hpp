#pragma once
/// \file
/// Runs a unit of work in one SQL transaction, retried on the conflicts PostgreSQL reports for races
/// (unique violation between two inserters, serialization failure, deadlock).

#include "common/result.hpp"
#include "registry/pg/pg.hpp"

#include <type_traits>

namespace depot::registry {

template <class T>
struct awaitable_value;
template <class T>
struct awaitable_value<boost::asio::awaitable<T>>
{
    using type = T;
};

/// `fn(pg::connection&)` returns `awaitable<result<T>>`. On a value the transaction commits, on an error it
/// rolls back and the error is returned. `fn` may send COMMIT itself with its last statement (query_all), so
/// as not to wait for that statement's rows before committing; then nothing is left to commit here. pg::error
/// with a retriable SQLSTATE restarts the whole unit up to `attempts` times; any other exception propagates
/// (the pool rolls back the abandoned transaction).
template <class F>
auto transact(pg::pool& pool, F fn, int attempts = 4)
    -> boost::asio::awaitable<typename awaitable_value<std::invoke_result_t<F&, pg::connection&>>::type>
{
    for (int attempt = 1;; ++attempt) {
        auto conn = co_await pool.acquire();
        try {
            // BEGIN rides with the first statement, and COMMIT carries whatever fn deferred.
            conn->defer("BEGIN");
            auto r = co_await fn(*conn);
            if (r) {
                if (conn->in_transaction() || conn->has_deferred())
                    co_await conn->query("COMMIT");
            } else {
                conn->discard_deferred(); // rolled back anyway; a BEGIN never sent needs no ROLLBACK
                if (conn->in_transaction())
                    co_await conn->execute("ROLLBACK");
            }
            co_return r;
        } catch (const pg::error& e) {
            if (attempt >= attempts || !(e.is_unique_violation() || e.is_serialization_failure()))
                throw;
        }
    }
}

} // namespace depot::registry
