#pragma once
/// \file
/// Running blocking calls (filesystem syscalls and the like) on a thread pool so they never hold up an I/O
/// thread, with the awaiting coroutine resumed on its own executor afterwards.

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <concepts>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace depot::storage {

namespace asio = boost::asio;

namespace detail {

/// Starts the blocking call on the pool; completes with (exception_ptr[, optional<R>]) on the handler's
/// associated executor, keeping that executor's context alive (tracked work) while the call runs.
struct blocking_initiation
{
    asio::thread_pool* pool;

    template <class Handler, class F>
    void operator()(Handler&& handler, F&& f) const
    {
        auto work = asio::make_work_guard(asio::get_associated_executor(handler));
        asio::post(*pool, [h = std::forward<Handler>(handler), f = std::forward<F>(f),
                           work = std::move(work)]() mutable {
            using value_type = std::invoke_result_t<std::decay_t<F>&>;
            std::exception_ptr failure;
            if constexpr (std::is_void_v<value_type>) {
                try {
                    f();
                } catch (...) {
                    failure = std::current_exception();
                }
                asio::dispatch(work.get_executor(),
                               [h = std::move(h), failure]() mutable { std::move(h)(failure); });
            } else {
                std::optional<value_type> value;
                try {
                    value.emplace(f());
                } catch (...) {
                    failure = std::current_exception();
                }
                asio::dispatch(work.get_executor(),
                               [h = std::move(h), failure, value = std::move(value)]() mutable {
                                   std::move(h)(failure, std::move(value));
                               });
            }
        });
    }
};

} // namespace detail

/// Runs `f()` on `pool` and returns its result to the awaiting coroutine, which resumes on its own executor
/// (its strand, if it runs on one), never on a pool thread. An exception thrown by `f` is rethrown in the
/// awaiting coroutine. `f` is moved to the pool and destroyed there; it may refer to the caller's locals,
/// which stay alive while the caller is suspended. Not cancellable: once posted, `f` runs to completion.
/// The awaiting coroutine's execution context counts as busy until the result is delivered, so
/// `io_context::run()` does not return early.
///
/// GCC 12 caveat: a closure (or aggregate) temporary with non-trivially-destructible members created inside a
/// co_await expression is destroyed twice. Pass such a function as a named variable:
/// `auto f = [path = std::string(...)] {...}; co_await run_blocking(pool, std::move(f));`. Reference
/// captures (`[&]`, `[this]`) are trivially destructible and safe inline.
template <class F>
requires std::move_constructible<F> && std::invocable<F&> &&(!std::is_reference_v<std::invoke_result_t<F&>>)
    asio::awaitable<std::invoke_result_t<F&>> run_blocking(asio::thread_pool& pool, F f)
{
    using value_type = std::invoke_result_t<F&>;
    if constexpr (std::is_void_v<value_type>) {
        co_await asio::async_initiate<const asio::use_awaitable_t<>, void(std::exception_ptr)>(
            detail::blocking_initiation{&pool}, asio::use_awaitable, std::move(f));
    } else {
        auto value = co_await asio::async_initiate<const asio::use_awaitable_t<>,
                                                   void(std::exception_ptr, std::optional<value_type>)>(
            detail::blocking_initiation{&pool}, asio::use_awaitable, std::move(f));
        co_return std::move(*value);
    }
}

} // namespace depot::storage
