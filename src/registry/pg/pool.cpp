/// \file
/// The connection pool. At most `max_connections` connections exist at once, counting those being opened;
/// they are opened on demand. An idle connection is checked (pg::connection::check) before it is handed
/// out; the most recently returned one goes first, so a quiet pool keeps using the same few.
///
/// When none is free, acquire() queues a waiter. A returned connection, or the slot freed by a discarded one,
/// goes to the oldest waiter directly (never back to the idle list while someone waits), so waiters are
/// served first come first served and a newcomer cannot overtake them. Each waiter owns a one-slot
/// concurrent_channel: release() runs on any thread, hands the connection over under the mutex, then
/// signals the channel, which resumes the waiter on its own executor. The waiter decides what happened
/// under the mutex too, so a hand-over racing with its timeout or cancellation is never lost.
///
/// Metrics: the connections the pool opens are wrapped in a `timed_connection` that times every statement
/// into the default registry (depot_db_query_duration_seconds, depot_db_query_errors_total); acquire() times
/// its waits (depot_db_pool_acquire_duration_seconds).

#include "common/log.hpp"
#include "common/metrics.hpp"
#include "registry/pg/pg.hpp"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>
#include <deque>
#include <exception>
#include <mutex>

namespace depot::pg {
namespace {

using boost::asio::deferred;
using boost::asio::use_awaitable;
using boost::asio::experimental::make_parallel_group;
using boost::asio::experimental::wait_for_one;

struct pool_metrics
{
    metrics::histogram& query_seconds;
    metrics::counter& query_errors;
    metrics::histogram& acquire_seconds;
};

const pool_metrics& instruments()
{
    static const pool_metrics m{
        .query_seconds = metrics::default_registry()
                             .histograms("depot_db_query_duration_seconds",
                                         "PostgreSQL statements run through the pool, including failed ones.",
                                         {}, metrics::latency_buckets_us(), 1e6)
                             .add({}),
        .query_errors = metrics::default_registry().counter_metric(
            "depot_db_query_errors_total",
            "PostgreSQL statements that failed (SQL errors and lost connections)."),
        .acquire_seconds =
            metrics::default_registry()
                .histograms("depot_db_pool_acquire_duration_seconds",
                            "Time acquire() took to hand out a connection, including opening one.", {},
                            metrics::latency_buckets_us(), 1e6)
                .add({}),
    };
    return m;
}

/// Times every statement of the connection it wraps; otherwise passes everything through.
class timed_connection final : public connection
{
public:
    explicit timed_connection(std::unique_ptr<connection> inner) : inner_(std::move(inner)) {}

    asio::awaitable<result_set> query(std::string_view sql, std::vector<param> params) override
    {
        timer t;
        co_return co_await inner_->query(sql, std::move(params));
    }
    asio::awaitable<void> execute(std::string_view sql) override
    {
        timer t;
        co_await inner_->execute(sql);
    }
    asio::awaitable<std::vector<result_set>> query_all(std::vector<statement> statements) override
    {
        timer t;
        co_return co_await inner_->query_all(std::move(statements));
    }
    void defer(std::string_view sql, std::vector<param> params) override
    {
        inner_->defer(sql, std::move(params));
    }
    void discard_deferred() noexcept override { inner_->discard_deferred(); }
    bool has_deferred() const noexcept override { return inner_->has_deferred(); }
    bool in_transaction() const noexcept override { return inner_->in_transaction(); }
    bool healthy() const noexcept override { return inner_->healthy(); }
    bool check() noexcept override { return inner_->check(); }

private:
    /// Observes the statement's latency when it goes out of scope; an exception leaving it is an error.
    struct timer
    {
        std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
        int exceptions = std::uncaught_exceptions();
        ~timer()
        {
            instruments().query_seconds.observe(metrics::micros_since(start));
            if (std::uncaught_exceptions() > exceptions)
                instruments().query_errors.inc();
        }
    };
    std::unique_ptr<connection> inner_;
};

class pg_pool final : public pool
{
public:
    pg_pool(asio::any_io_executor executor, pool_options options)
        : executor_(std::move(executor)), options_(std::move(options))
    {
        // release() must not allocate (it runs in destructors): the idle list never outgrows this.
        idle_.reserve(options_.max_connections);
    }

    asio::awaitable<pooled_connection> acquire() override;

    pool_stats stats() const override
    {
        std::lock_guard lock(mutex_);
        return {.open = open_, .idle = idle_.size(), .waiting = waiters_.size()};
    }

    void release(std::unique_ptr<connection> conn) noexcept override;

private:
    using signal_channel = asio::experimental::concurrent_channel<void(boost::system::error_code)>;

    struct waiter
    {
        explicit waiter(const asio::any_io_executor& executor) : signal(executor, 1) {}
        signal_channel signal;
        bool granted = false;             ///< set under the mutex when served
        std::unique_ptr<connection> conn; ///< the connection handed over; null if granted a slot to open one
    };

    /// Undoes a waiter's registration if its coroutine leaves acquire() without taking what it was given
    /// (cancellation, or the frame destroyed while suspended).
    class waiter_guard
    {
    public:
        waiter_guard(pg_pool& pool, std::shared_ptr<waiter> w) : pool_(pool), w_(std::move(w)) {}
        ~waiter_guard()
        {
            if (w_)
                pool_.abandon(*w_);
        }
        waiter_guard(const waiter_guard&) = delete;
        waiter_guard& operator=(const waiter_guard&) = delete;
        void dismiss() noexcept { w_.reset(); }

    private:
        pg_pool& pool_;
        std::shared_ptr<waiter> w_;
    };

    /// Gives a reserved slot back if opening a connection for it fails or is abandoned.
    class slot_guard
    {
    public:
        explicit slot_guard(pg_pool& pool) : pool_(&pool) {}
        ~slot_guard()
        {
            if (pool_)
                pool_->discard(nullptr);
        }
        slot_guard(const slot_guard&) = delete;
        slot_guard& operator=(const slot_guard&) = delete;
        void dismiss() noexcept { pool_ = nullptr; }

    private:
        pg_pool* pool_;
    };

    void give_back(std::unique_ptr<connection> conn) noexcept;
    void discard(std::unique_ptr<connection> conn) noexcept;
    void abandon(waiter& w) noexcept;
    static void wake(const std::shared_ptr<waiter>& w) noexcept;
    asio::awaitable<std::unique_ptr<connection>> wait_turn(std::shared_ptr<waiter> w, bool& open_new);
    static asio::awaitable<void> roll_back(std::shared_ptr<pg_pool> self, std::unique_ptr<connection> conn);

    const asio::any_io_executor executor_;
    const pool_options options_;
    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<connection>> idle_;
    std::deque<std::shared_ptr<waiter>> waiters_;
    std::size_t open_ = 0; ///< connections open, being opened, or granted to a waiter to open
};

asio::awaitable<pooled_connection> pg_pool::acquire()
{
    auto self = std::static_pointer_cast<pg_pool>(shared_from_this());
    auto caller = co_await asio::this_coro::executor;
    const auto started = std::chrono::steady_clock::now();
    std::unique_ptr<connection> conn;
    std::shared_ptr<waiter> w;
    bool open_new = false;
    while (!conn && !open_new && !w) {
        std::unique_ptr<connection> candidate;
        {
            std::lock_guard lock(mutex_);
            if (!idle_.empty()) {
                candidate = std::move(idle_.back());
                idle_.pop_back();
            } else if (open_ < options_.max_connections) {
                ++open_;
                open_new = true;
            } else {
                w = std::make_shared<waiter>(caller);
                waiters_.push_back(w);
            }
        }
        if (!candidate)
            break;
        // Checked outside the lock: it reads from the socket.
        if (candidate->check()) {
            conn = std::move(candidate);
        } else {
            log::info("discarding an idle PostgreSQL connection the server closed");
            discard(std::move(candidate));
        }
    }
    if (w)
        conn = co_await wait_turn(std::move(w), open_new);
    if (open_new) {
        slot_guard slot(*this);
        auto opened = co_await connect(executor_, options_.conninfo, options_.connect_timeout);
        conn = std::make_unique<timed_connection>(std::move(opened));
        slot.dismiss();
    }
    instruments().acquire_seconds.observe(metrics::micros_since(started));
    co_return pooled_connection(std::move(self), std::move(conn));
}

/// Waits until `w` is served or acquire_timeout passes. Returns the connection handed over, or null with
/// `open_new` set when granted a slot to open one.
asio::awaitable<std::unique_ptr<connection>> pg_pool::wait_turn(std::shared_ptr<waiter> w, bool& open_new)
{
    waiter_guard guard(*this, w);
    asio::steady_timer timer(co_await asio::this_coro::executor);
    timer.expires_after(options_.acquire_timeout);
    auto [order, signal_ec, timer_ec] =
        co_await make_parallel_group(w->signal.async_receive(deferred), timer.async_wait(deferred))
            .async_wait(wait_for_one(), use_awaitable);

    std::unique_ptr<connection> conn;
    bool granted = false;
    {
        std::lock_guard lock(mutex_);
        if (w->granted) {
            granted = true;
            conn = std::move(w->conn);
        } else {
            std::erase(waiters_, w);
        }
    }
    guard.dismiss();
    if (granted) {
        open_new = !conn;
        co_return conn;
    }
    if (order[0] == 1 && !timer_ec) {
        throw error("timed out after " + std::to_string(options_.acquire_timeout.count()) +
                        " ms waiting for a PostgreSQL connection (all " +
                        std::to_string(options_.max_connections) + " in use)",
                    "");
    }
    throw boost::system::system_error(order[0] == 0 ? signal_ec : timer_ec);
}

void pg_pool::abandon(waiter& w) noexcept
{
    std::unique_ptr<connection> conn;
    bool granted = false;
    {
        std::lock_guard lock(mutex_);
        granted = w.granted;
        if (granted)
            conn = std::move(w.conn);
        else
            std::erase_if(waiters_, [&](const auto& p) { return p.get() == &w; });
    }
    if (!granted)
        return;
    if (conn)
        give_back(std::move(conn));
    else
        discard(nullptr); // the granted slot
}

void pg_pool::wake(const std::shared_ptr<waiter>& w) noexcept
{
    try {
        w->signal.try_send(boost::system::error_code{});
    } catch (...) {
        // Cannot happen with a one-slot buffer that only ever receives one signal; the waiter would time
        // out and still find its connection.
    }
}

void pg_pool::give_back(std::unique_ptr<connection> conn) noexcept
{
    std::shared_ptr<waiter> w;
    {
        std::lock_guard lock(mutex_);
        if (waiters_.empty()) {
            idle_.push_back(std::move(conn));
            return;
        }
        w = std::move(waiters_.front());
        waiters_.pop_front();
        w->granted = true;
        w->conn = std::move(conn);
    }
    wake(w);
}

/// Closes `conn` (if any) and frees its slot, or hands the slot to the oldest waiter.
void pg_pool::discard(std::unique_ptr<connection> conn) noexcept
{
    std::shared_ptr<waiter> w;
    {
        std::lock_guard lock(mutex_);
        if (waiters_.empty()) {
            --open_;
        } else {
            w = std::move(waiters_.front());
            waiters_.pop_front();
            w->granted = true;
        }
    }
    conn.reset();
    if (w)
        wake(w);
}

void pg_pool::release(std::unique_ptr<connection> conn) noexcept
{
    if (!conn)
        return;
    conn->discard_deferred();
    if (!conn->healthy()) {
        log::info("discarding a broken PostgreSQL connection");
        discard(std::move(conn));
        return;
    }
    if (!conn->in_transaction()) {
        give_back(std::move(conn));
        return;
    }
    try {
        auto self = std::static_pointer_cast<pg_pool>(shared_from_this());
        asio::co_spawn(executor_, roll_back(std::move(self), std::move(conn)), asio::detached);
    } catch (...) {
        discard(std::move(conn)); // null if the coroutine took it
    }
}

/// Rolls back the transaction a connection was returned in, then makes it idle; discards it if that fails or
/// takes longer than connect_timeout.
asio::awaitable<void> pg_pool::roll_back(std::shared_ptr<pg_pool> self, std::unique_ptr<connection> conn)
{
    struct discard_unless_returned
    {
        pg_pool& pool;
        std::unique_ptr<connection>& conn;
        ~discard_unless_returned()
        {
            if (conn)
                pool.discard(std::move(conn));
        }
    } guard{*self, conn};

    log::debug("rolling back a PostgreSQL connection returned inside a transaction");
    asio::steady_timer timer(co_await asio::this_coro::executor);
    timer.expires_after(self->options_.connect_timeout);
    auto [order, failure, timer_ec] =
        co_await make_parallel_group(asio::co_spawn(self->executor_, conn->execute("ROLLBACK"), deferred),
                                     timer.async_wait(deferred))
            .async_wait(wait_for_one(), use_awaitable);
    (void)timer_ec;
    if (order[0] == 0 && !failure && conn->healthy() && !conn->in_transaction()) {
        self->give_back(std::move(conn));
        co_return;
    }
    log::warn("discarding a PostgreSQL connection whose transaction could not be rolled back");
}

} // namespace

pooled_connection::pooled_connection(std::shared_ptr<pool> owner, std::unique_ptr<connection> conn)
    : owner_(std::move(owner)), conn_(std::move(conn))
{}

pooled_connection::~pooled_connection()
{
    if (owner_ && conn_)
        owner_->release(std::move(conn_));
}

pooled_connection& pooled_connection::operator=(pooled_connection&& other) noexcept
{
    if (this != &other) {
        if (owner_ && conn_)
            owner_->release(std::move(conn_));
        owner_ = std::move(other.owner_);
        conn_ = std::move(other.conn_);
    }
    return *this;
}

std::shared_ptr<pool> make_pool(asio::any_io_executor executor, pool_options options)
{
    if (options.max_connections == 0)
        throw std::invalid_argument("pg::pool_options::max_connections must be at least 1");
    return std::make_shared<pg_pool>(std::move(executor), std::move(options));
}

} // namespace depot::pg
