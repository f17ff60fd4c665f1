#pragma once
/// \file
/// The bytes of stripe writes one RADOS store keeps in flight, over all its writers. Each writer already
/// bounds itself (`window` stripes); without a shared bound, N concurrent uploads hold N windows of stripes
/// in memory (16 uploads x 8 x 4 MiB = 512 MiB at worst). A writer takes a lease for a stripe's bytes before
/// handing the stripe to librados, waiting its turn when the budget is spent, and librados's completion
/// returns the lease, wherever that happens. Only completions of writes already in flight free bytes, so a
/// waiter never waits on a client's next byte, and no lease is held across a client read.

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

namespace depot::storage::rados_detail {

namespace asio = boost::asio;

class write_budget : public std::enable_shared_from_this<write_budget>
{
public:
    /// Bytes taken from the budget until destroyed (or moved from). Destroying it on any thread is fine.
    class lease
    {
    public:
        lease() = default;
        lease(lease&& o) noexcept : budget_(std::move(o.budget_)), bytes_(o.bytes_) { o.bytes_ = 0; }
        lease& operator=(lease&& o) noexcept
        {
            if (this != &o) {
                reset();
                budget_ = std::move(o.budget_);
                bytes_ = o.bytes_;
                o.bytes_ = 0;
            }
            return *this;
        }
        lease(const lease&) = delete;
        lease& operator=(const lease&) = delete;
        ~lease() { reset(); }

        std::uint64_t bytes() const noexcept { return bytes_; }
        void reset() noexcept
        {
            if (budget_ && bytes_)
                budget_->release(bytes_);
            budget_.reset();
            bytes_ = 0;
        }

    private:
        friend class write_budget;
        lease(std::shared_ptr<write_budget> b, std::uint64_t n) : budget_(std::move(b)), bytes_(n) {}
        std::shared_ptr<write_budget> budget_;
        std::uint64_t bytes_ = 0;
    };

    /// A budget of `capacity` bytes (at least 1).
    static std::shared_ptr<write_budget> make(std::uint64_t capacity)
    {
        return std::shared_ptr<write_budget>(new write_budget(capacity ? capacity : 1));
    }

    /// Waits until `bytes` are free (first come, first served) and takes them. A request larger than the
    /// whole budget is granted once nothing else is taken, so it cannot wait forever. Resumes the caller on
    /// its own executor.
    asio::awaitable<lease> acquire(std::uint64_t bytes);

    std::uint64_t capacity() const noexcept { return capacity_; }
    /// Bytes taken right now, and the most ever taken at once.
    std::uint64_t in_use() const;
    std::uint64_t peak() const;
    /// Acquisitions that had to wait.
    std::uint64_t waits() const;

private:
    explicit write_budget(std::uint64_t capacity) : capacity_(capacity) {}

    struct waiter_base
    {
        virtual ~waiter_base() = default;
        virtual void grant() = 0;
        std::uint64_t bytes = 0;
    };

    template <class Handler>
    struct waiter final : waiter_base
    {
        explicit waiter(Handler h) : handler(std::move(h)), work(asio::get_associated_executor(handler)) {}
        void grant() override
        {
            auto ex = work.get_executor();
            asio::post(ex, [h = std::move(handler), w = std::move(work)]() mutable { std::move(h)(); });
        }
        Handler handler;
        asio::executor_work_guard<asio::associated_executor_t<Handler>> work;
    };

    /// Grants `w` now (true) or queues it.
    bool admit(std::unique_ptr<waiter_base>& w);
    /// Takes `bytes` when they fit (anything fits an empty budget). Under mu_.
    bool take_if_fits(std::uint64_t bytes) noexcept;
    void release(std::uint64_t bytes) noexcept;

    const std::uint64_t capacity_;
    mutable std::mutex mu_;
    std::uint64_t used_ = 0;
    std::uint64_t peak_ = 0;
    std::uint64_t waits_ = 0;
    std::deque<std::unique_ptr<waiter_base>> queue_;
};

} // namespace depot::storage::rados_detail
