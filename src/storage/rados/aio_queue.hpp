#pragma once
/// \file
/// librados asynchronous operations, awaited from coroutines. librados reports a finished operation by
/// calling a C callback on one of its own threads; `aio_queue` turns those callbacks into results that a
/// coroutine awaits on its own executor. Nothing here ever blocks a thread.
///
/// A queue belongs to one coroutine at a time (a writer's window of stripe writes, a reader's read-ahead,
/// or a single operation). Operations keep their queue alive, so an owner that goes away with operations
/// in flight leaves nothing dangling: their results are dropped when they arrive.

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <rados/librados.hpp>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace depot::storage::rados_detail {

namespace asio = boost::asio;

/// What one finished operation reports.
struct aio_result
{
    /// The tag the operation was started with (a stripe index, say).
    std::uint64_t tag = 0;
    /// librados's return value: >= 0 on success, -errno on failure.
    int r = 0;
    /// The bytes a read returned (empty for other operations).
    ceph::bufferlist data;
};

class aio_queue : public std::enable_shared_from_this<aio_queue>
{
public:
    static std::shared_ptr<aio_queue> make() { return std::shared_ptr<aio_queue>(new aio_queue()); }

    /// Starts one operation. `submit(completion, out)` hands it to librados (e.g. `io.aio_read(oid,
    /// completion, &out, len, off)`) and returns librados's immediate return value; `out` is a bufferlist
    /// that lives until the operation completes and becomes `aio_result::data`. Whatever `submit` refers
    /// to (out-parameters of a compound read) must stay alive until the result is received. A submission
    /// that fails at once is reported through next() like any other result. `hold` is kept until the
    /// operation completes and is then dropped on librados's thread (a write budget's lease, say).
    template <class Submit>
    void start(std::uint64_t tag, Submit&& submit, std::shared_ptr<void> hold = nullptr);

    /// Operations started and not yet received by next().
    std::size_t pending() const noexcept { return pending_; }

    /// Waits for the next operation to finish, in completion order, and resumes the caller on its own
    /// executor (keeping that executor's context busy meanwhile). One waiter at a time; throws
    /// std::logic_error when nothing is pending.
    asio::awaitable<aio_result> next();

private:
    aio_queue() = default;

    struct waiter_base
    {
        virtual ~waiter_base() = default;
        virtual void complete(aio_result result) = 0;
    };

    template <class Handler>
    struct waiter final : waiter_base
    {
        explicit waiter(Handler h) : handler(std::move(h)), work(asio::get_associated_executor(handler)) {}

        void complete(aio_result result) override
        {
            auto ex = work.get_executor();
            asio::post(ex, [h = std::move(handler), result = std::move(result),
                            w = std::move(work)]() mutable { std::move(h)(std::move(result)); });
        }

        Handler handler;
        asio::executor_work_guard<asio::associated_executor_t<Handler>> work;
    };

    /// One operation handed to librados; owned by librados's callback from submission to completion.
    struct call
    {
        std::shared_ptr<aio_queue> queue;
        std::uint64_t tag = 0;
        librados::AioCompletion* completion = nullptr;
        ceph::bufferlist out;
        std::shared_ptr<void> hold;
    };

    static void on_complete(librados::completion_t, void* arg);
    /// Hands a result to the waiter, or keeps it for the next next(). Any thread.
    void deliver(aio_result result);
    void wait(std::unique_ptr<waiter_base> w);

    std::mutex mu_;
    std::deque<aio_result> ready_;
    std::unique_ptr<waiter_base> waiter_;
    /// Only touched by the owning coroutine.
    std::size_t pending_ = 0;
};

template <class Submit>
void aio_queue::start(std::uint64_t tag, Submit&& submit, std::shared_ptr<void> hold)
{
    auto c = std::make_unique<call>();
    c->queue = shared_from_this();
    c->tag = tag;
    c->hold = std::move(hold);
    c->completion = librados::Rados::aio_create_completion(c.get(), &aio_queue::on_complete);
    ++pending_;
    // From here on the callback may run (on a librados thread) before submit() even returns.
    auto* raw = c.release();
    int r = 0;
    try {
        r = submit(raw->completion, raw->out);
    } catch (...) {
        // Nothing was submitted (librados throws only before handing the operation over, e.g. bad_alloc).
        std::unique_ptr<call> owned(raw);
        owned->completion->release();
        --pending_;
        throw;
    }
    if (r < 0) {
        // Never submitted: librados will not call back.
        std::unique_ptr<call> owned(raw);
        owned->completion->release();
        deliver(aio_result{.tag = tag, .r = r, .data = {}});
    }
}

/// Starts one operation on a fresh queue and waits for it. `submit` is usually a lambda capturing by
/// reference; it must be trivially destructible because GCC 12 destroys a temporary argument of a coroutine
/// called inside co_await twice.
template <class Submit>
asio::awaitable<aio_result> run_aio(Submit submit)
{
    static_assert(std::is_trivially_destructible_v<Submit>, "capture by reference (see above)");
    auto queue = aio_queue::make();
    queue->start(0, std::move(submit));
    co_return co_await queue->next();
}

} // namespace depot::storage::rados_detail
