#include "storage/rados/aio_queue.hpp"

namespace depot::storage::rados_detail {

void aio_queue::on_complete(librados::completion_t, void* arg)
{
    std::unique_ptr<call> c(static_cast<call*>(arg));
    int r = c->completion->get_return_value();
    // librados holds its own reference while it runs this callback, so releasing here is safe.
    c->completion->release();
    // Returned before the owner hears of the completion, so a writer woken by it finds the bytes free.
    c->hold.reset();
    c->queue->deliver(aio_result{.tag = c->tag, .r = r, .data = std::move(c->out)});
}

void aio_queue::deliver(aio_result result)
{
    std::unique_ptr<waiter_base> w;
    {
        std::lock_guard lock(mu_);
        if (!waiter_) {
            ready_.push_back(std::move(result));
            return;
        }
        w = std::move(waiter_);
    }
    w->complete(std::move(result));
}

void aio_queue::wait(std::unique_ptr<waiter_base> w)
{
    aio_result result;
    {
        std::lock_guard lock(mu_);
        if (ready_.empty()) {
            waiter_ = std::move(w);
            return;
        }
        result = std::move(ready_.front());
        ready_.pop_front();
    }
    // Never resume the caller inside its own co_await: post, like a completion from librados.
    w->complete(std::move(result));
}

asio::awaitable<aio_result> aio_queue::next()
{
    if (pending_ == 0)
        throw std::logic_error("aio_queue::next with no operation in flight");
    // The queue must outlive the wait even if the caller drops its reference meanwhile.
    auto self = shared_from_this();
    auto result = co_await asio::async_initiate<const asio::use_awaitable_t<>, void(aio_result)>(
        [this](auto handler) { wait(std::make_unique<waiter<decltype(handler)>>(std::move(handler))); },
        asio::use_awaitable);
    --pending_;
    co_return result;
}

} // namespace depot::storage::rados_detail
