#include "storage/instrumented/instrumented_blob_store.hpp"

#include "storage/faulty/faulty_blob_store.hpp"

#include <array>
#include <chrono>

namespace depot::storage {
namespace {

using clock_type = std::chrono::steady_clock;

/// blob_op values, then abort (which blob_op leaves out because it cannot fail).
constexpr std::size_t op_count = 10;
constexpr std::size_t abort_index = 9;

struct op_metrics
{
    metrics::histogram* duration = nullptr;
    metrics::counter* errors = nullptr;
};

/// The series of one store kind, registered once per decorator.
struct store_instruments
{
    std::array<op_metrics, op_count> ops;
    metrics::counter* read_bytes = nullptr;
    metrics::counter* written_bytes = nullptr;

    const op_metrics& at(blob_op op) const { return ops[static_cast<std::size_t>(op)]; }
};

std::shared_ptr<const store_instruments> register_instruments(metrics::registry& reg, std::string_view kind)
{
    auto& durations = reg.histograms("depot_blob_operation_duration_seconds",
                                     "Blob store calls by operation, including failed ones.",
                                     {"store", "operation"}, metrics::latency_buckets_us(), 1e6);
    auto& errors = reg.counters("depot_blob_operation_errors_total",
                                "Blob store calls that failed with unavailable or io_error, or threw.",
                                {"store", "operation"});
    auto i = std::make_shared<store_instruments>();
    for (std::size_t n = 0; n < op_count; ++n) {
        std::string_view name =
            n == abort_index ? std::string_view("abort") : to_string(static_cast<blob_op>(n));
        i->ops[n].duration = &durations.add({kind, name});
        i->ops[n].errors = &errors.add({kind, name});
    }
    i->read_bytes = &reg.counters("depot_blob_read_bytes_total", "Bytes read from the blob store.", {"store"})
                         .add({kind});
    i->written_bytes =
        &reg.counters("depot_blob_written_bytes_total", "Bytes written to the blob store.", {"store"})
             .add({kind});
    return i;
}

bool is_failure(const error& e)
{
    return e.code == errc::unavailable || e.code == errc::io_error;
}

/// Observes one call's latency and outcome when it goes out of scope, also when the call throws.
class call_timer
{
public:
    explicit call_timer(const op_metrics& m) : m_(m), start_(clock_type::now()) {}
    ~call_timer()
    {
        m_.duration->observe(metrics::micros_since(start_));
        if (failed_ || std::uncaught_exceptions() > exceptions_)
            m_.errors->inc();
    }
    call_timer(const call_timer&) = delete;
    call_timer& operator=(const call_timer&) = delete;

    template <class T>
    const result<T>& check(const result<T>& r)
    {
        failed_ = !r && is_failure(r.error());
        return r;
    }

private:
    const op_metrics& m_;
    clock_type::time_point start_;
    int exceptions_ = std::uncaught_exceptions();
    bool failed_ = false;
};

class instrumented_writer final : public blob_writer
{
public:
    instrumented_writer(std::unique_ptr<blob_writer> inner, std::shared_ptr<blob_store> inner_store,
                        std::shared_ptr<const store_instruments> m)
        : inner_(std::move(inner)), inner_store_(std::move(inner_store)), m_(std::move(m))
    {}

    const blob_id& id() const noexcept override { return inner_->id(); }
    std::uint64_t size() const noexcept override { return inner_->size(); }

    asio::awaitable<result<void>> write(std::span<const std::byte> data) override
    {
        call_timer t(m_->at(blob_op::write));
        auto r = co_await inner_->write(data);
        if (t.check(r))
            m_->written_bytes->inc(data.size());
        co_return r;
    }

    asio::awaitable<result<void>> commit() override
    {
        call_timer t(m_->at(blob_op::commit));
        auto r = co_await inner_->commit();
        t.check(r);
        co_return r;
    }

    asio::awaitable<void> abort() override
    {
        call_timer t(m_->ops[abort_index]);
        co_await inner_->abort();
    }

private:
    std::unique_ptr<blob_writer> inner_;
    std::shared_ptr<blob_store> inner_store_;
    std::shared_ptr<const store_instruments> m_;
};

class instrumented_reader final : public blob_reader
{
public:
    instrumented_reader(std::unique_ptr<blob_reader> inner, std::shared_ptr<blob_store> inner_store,
                        std::shared_ptr<const store_instruments> m)
        : inner_(std::move(inner)), inner_store_(std::move(inner_store)), m_(std::move(m))
    {}

    asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override
    {
        call_timer t(m_->at(blob_op::read_some));
        auto r = co_await inner_->read_some(buf);
        if (t.check(r))
            m_->read_bytes->inc(*r);
        co_return r;
    }

    asio::awaitable<result<std::span<const std::byte>>> read_view(std::size_t max) override
    {
        call_timer t(m_->at(blob_op::read_some));
        auto r = co_await inner_->read_view(max);
        if (t.check(r))
            m_->read_bytes->inc(r->size());
        co_return r;
    }

private:
    std::unique_ptr<blob_reader> inner_;
    std::shared_ptr<blob_store> inner_store_;
    std::shared_ptr<const store_instruments> m_;
};

class instrumented_store final : public blob_store
{
public:
    instrumented_store(std::shared_ptr<blob_store> inner, metrics::registry& reg)
        : inner_(std::move(inner)), m_(register_instruments(reg, inner_->kind()))
    {}

    asio::awaitable<result<std::unique_ptr<blob_writer>>> create(write_options options) override
    {
        call_timer t(m_->at(blob_op::create));
        auto created = co_await inner_->create(options);
        if (!t.check(created))
            co_return std::move(created).error();
        co_return std::make_unique<instrumented_writer>(std::move(*created), inner_, m_);
    }

    asio::awaitable<result<std::unique_ptr<blob_reader>>> open(const blob_id& id, std::uint64_t offset,
                                                               std::uint64_t length) override
    {
        call_timer t(m_->at(blob_op::open));
        auto opened = co_await inner_->open(id, offset, length);
        if (!t.check(opened))
            co_return std::move(opened).error();
        co_return std::make_unique<instrumented_reader>(std::move(*opened), inner_, m_);
    }

    asio::awaitable<result<blob_info>> stat(const blob_id& id) override
    {
        call_timer t(m_->at(blob_op::stat));
        auto r = co_await inner_->stat(id);
        t.check(r);
        co_return r;
    }

    asio::awaitable<result<void>> remove(const blob_id& id) override
    {
        call_timer t(m_->at(blob_op::remove));
        auto r = co_await inner_->remove(id);
        t.check(r);
        co_return r;
    }

    asio::awaitable<result<std::vector<blob_listing_entry>>> list(const blob_id& after,
                                                                  std::size_t limit) override
    {
        call_timer t(m_->at(blob_op::list));
        auto r = co_await inner_->list(after, limit);
        t.check(r);
        co_return r;
    }

    asio::awaitable<result<std::size_t>>
    remove_incomplete(std::chrono::system_clock::time_point older_than) override
    {
        call_timer t(m_->at(blob_op::remove_incomplete));
        auto r = co_await inner_->remove_incomplete(older_than);
        t.check(r);
        co_return r;
    }

    std::string_view kind() const noexcept override { return inner_->kind(); }

private:
    std::shared_ptr<blob_store> inner_;
    std::shared_ptr<const store_instruments> m_;
};

} // namespace

std::shared_ptr<blob_store> make_instrumented_blob_store(std::shared_ptr<blob_store> inner,
                                                         metrics::registry& registry)
{
    return std::make_shared<instrumented_store>(std::move(inner), registry);
}

} // namespace depot::storage
