#include "storage/faulty/faulty_blob_store.hpp"

#include <stdexcept>
#include <string>

namespace depot::storage {

std::string_view to_string(blob_op op) noexcept
{
    switch (op) {
    case blob_op::create:
        return "create";
    case blob_op::write:
        return "write";
    case blob_op::commit:
        return "commit";
    case blob_op::open:
        return "open";
    case blob_op::read_some:
        return "read_some";
    case blob_op::stat:
        return "stat";
    case blob_op::remove:
        return "remove";
    case blob_op::list:
        return "list";
    case blob_op::remove_incomplete:
        return "remove_incomplete";
    }
    return "unknown";
}

void fault_control::fail_nth(std::size_t n, errc code)
{
    std::lock_guard lock(mu_);
    mode_ = n == 0 ? mode::off : mode::nth;
    countdown_ = n;
    only_.reset();
    code_ = code;
    throws_ = false;
}

void fault_control::fail_nth_of(blob_op op, std::size_t n, errc code)
{
    fail_nth(n, code);
    std::lock_guard lock(mu_);
    only_ = op;
}

void fault_control::throw_nth(std::size_t n)
{
    fail_nth(n);
    std::lock_guard lock(mu_);
    throws_ = true;
}

void fault_control::fail_all(errc code)
{
    std::lock_guard lock(mu_);
    mode_ = mode::all;
    only_.reset();
    code_ = code;
    throws_ = false;
}

void fault_control::heal()
{
    std::lock_guard lock(mu_);
    mode_ = mode::off;
}

std::size_t fault_control::operations() const
{
    std::lock_guard lock(mu_);
    return operations_;
}

std::size_t fault_control::injected() const
{
    std::lock_guard lock(mu_);
    return injected_;
}

std::optional<blob_op> fault_control::last_injected() const
{
    std::lock_guard lock(mu_);
    return last_injected_;
}

std::optional<error> fault_control::on_operation(blob_op op)
{
    std::lock_guard lock(mu_);
    ++operations_;
    bool fail = false;
    if (mode_ == mode::all) {
        fail = true;
    } else if (mode_ == mode::nth && (!only_ || *only_ == op) && --countdown_ == 0) {
        fail = true;
        mode_ = mode::off;
    }
    if (!fail)
        return std::nullopt;
    ++injected_;
    last_injected_ = op;
    auto message = "injected fault in " + std::string(to_string(op));
    if (throws_)
        throw std::runtime_error(message);
    return make_error(code_, std::move(message));
}

namespace {

class faulty_writer final : public blob_writer
{
public:
    faulty_writer(std::unique_ptr<blob_writer> inner, std::shared_ptr<blob_store> inner_store,
                  std::shared_ptr<fault_control> faults)
        : inner_(std::move(inner)), inner_store_(std::move(inner_store)), faults_(std::move(faults))
    {}

    const blob_id& id() const noexcept override { return inner_->id(); }
    std::uint64_t size() const noexcept override { return inner_->size(); }

    asio::awaitable<result<void>> write(std::span<const std::byte> data) override
    {
        if (failure_)
            co_return *failure_;
        if (auto injected = inject(blob_op::write))
            co_return *injected;
        co_return co_await inner_->write(data);
    }

    asio::awaitable<result<void>> commit() override
    {
        if (failure_)
            co_return *failure_;
        if (auto injected = inject(blob_op::commit))
            co_return *injected;
        co_return co_await inner_->commit();
    }

    asio::awaitable<void> abort() override { co_await inner_->abort(); }

private:
    /// Asks the control; an injected failure (or exception) makes the writer unusable, as a real one would.
    std::optional<error> inject(blob_op op)
    {
        try {
            if (auto e = faults_->on_operation(op)) {
                failure_ = e;
                return e;
            }
        } catch (const std::exception& ex) {
            failure_ = make_error(errc::io_error, ex.what());
            throw;
        }
        return std::nullopt;
    }

    std::unique_ptr<blob_writer> inner_;
    std::shared_ptr<blob_store> inner_store_;
    std::shared_ptr<fault_control> faults_;
    std::optional<error> failure_;
};

class faulty_reader final : public blob_reader
{
public:
    faulty_reader(std::unique_ptr<blob_reader> inner, std::shared_ptr<blob_store> inner_store,
                  std::shared_ptr<fault_control> faults)
        : inner_(std::move(inner)), inner_store_(std::move(inner_store)), faults_(std::move(faults))
    {}

    asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override
    {
        if (auto injected = faults_->on_operation(blob_op::read_some))
            co_return *injected;
        co_return co_await inner_->read_some(buf);
    }

private:
    std::unique_ptr<blob_reader> inner_;
    std::shared_ptr<blob_store> inner_store_;
    std::shared_ptr<fault_control> faults_;
};

class faulty_store final : public blob_store
{
public:
    faulty_store(std::shared_ptr<blob_store> inner, std::shared_ptr<fault_control> faults)
        : inner_(std::move(inner)), faults_(std::move(faults))
    {}

    asio::awaitable<result<std::unique_ptr<blob_writer>>> create(write_options options) override
    {
        if (auto injected = faults_->on_operation(blob_op::create))
            co_return *injected;
        auto created = co_await inner_->create(options);
        if (!created)
            co_return std::move(created).error();
        co_return std::make_unique<faulty_writer>(std::move(*created), inner_, faults_);
    }

    asio::awaitable<result<std::unique_ptr<blob_reader>>> open(const blob_id& id, std::uint64_t offset,
                                                               std::uint64_t length) override
    {
        if (auto injected = faults_->on_operation(blob_op::open))
            co_return *injected;
        auto opened = co_await inner_->open(id, offset, length);
        if (!opened)
            co_return std::move(opened).error();
        co_return std::make_unique<faulty_reader>(std::move(*opened), inner_, faults_);
    }

    asio::awaitable<result<blob_info>> stat(const blob_id& id) override
    {
        if (auto injected = faults_->on_operation(blob_op::stat))
            co_return *injected;
        co_return co_await inner_->stat(id);
    }

    asio::awaitable<result<void>> remove(const blob_id& id) override
    {
        if (auto injected = faults_->on_operation(blob_op::remove))
            co_return *injected;
        co_return co_await inner_->remove(id);
    }

    asio::awaitable<result<std::vector<blob_listing_entry>>> list(const blob_id& after,
                                                                  std::size_t limit) override
    {
        if (auto injected = faults_->on_operation(blob_op::list))
            co_return *injected;
        co_return co_await inner_->list(after, limit);
    }

    asio::awaitable<result<std::size_t>>
    remove_incomplete(std::chrono::system_clock::time_point older_than) override
    {
        if (auto injected = faults_->on_operation(blob_op::remove_incomplete))
            co_return *injected;
        co_return co_await inner_->remove_incomplete(older_than);
    }

    std::string_view kind() const noexcept override { return "faulty"; }

private:
    std::shared_ptr<blob_store> inner_;
    std::shared_ptr<fault_control> faults_;
};

} // namespace

faulty_blob_store make_faulty_blob_store(std::shared_ptr<blob_store> inner)
{
    auto faults = std::make_shared<fault_control>();
    return {std::make_shared<faulty_store>(std::move(inner), faults), faults};
}

} // namespace depot::storage
