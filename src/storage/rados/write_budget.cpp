#include "storage/rados/write_budget.hpp"

#include <algorithm>
#include <vector>

namespace depot::storage::rados_detail {

asio::awaitable<write_budget::lease> write_budget::acquire(std::uint64_t bytes)
{
    auto self = shared_from_this();
    {
        std::lock_guard lock(mu_);
        if (queue_.empty() && take_if_fits(bytes))
            co_return lease(std::move(self), bytes);
        ++waits_;
    }
    co_await asio::async_initiate<const asio::use_awaitable_t<>, void()>(
        [this, bytes](auto handler) {
            std::unique_ptr<waiter_base> w = std::make_unique<waiter<decltype(handler)>>(std::move(handler));
            w->bytes = bytes;
            // Granted at once when the budget freed up meanwhile; posted, never resumed inline.
            if (admit(w))
                w->grant();
        },
        asio::use_awaitable);
    co_return lease(std::move(self), bytes);
}

bool write_budget::admit(std::unique_ptr<waiter_base>& w)
{
    std::lock_guard lock(mu_);
    if (queue_.empty() && take_if_fits(w->bytes))
        return true;
    queue_.push_back(std::move(w));
    return false;
}

bool write_budget::take_if_fits(std::uint64_t bytes) noexcept
{
    if (used_ != 0 && used_ + bytes > capacity_)
        return false;
    used_ += bytes;
    peak_ = std::max(peak_, used_);
    return true;
}

void write_budget::release(std::uint64_t bytes) noexcept
{
    std::vector<std::unique_ptr<waiter_base>> granted;
    {
        std::lock_guard lock(mu_);
        used_ -= std::min(used_, bytes);
        while (!queue_.empty() && take_if_fits(queue_.front()->bytes)) {
            granted.push_back(std::move(queue_.front()));
            queue_.pop_front();
        }
    }
    for (auto& w : granted)
        w->grant();
}

std::uint64_t write_budget::in_use() const
{
    std::lock_guard lock(mu_);
    return used_;
}

std::uint64_t write_budget::peak() const
{
    std::lock_guard lock(mu_);
    return peak_;
}

std::uint64_t write_budget::waits() const
{
    std::lock_guard lock(mu_);
    return waits_;
}

} // namespace depot::storage::rados_detail
