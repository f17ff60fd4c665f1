/// \file
/// The in-memory blob store. Committed blobs are immutable byte vectors shared with their readers, so a read
/// never holds the lock and a removed blob stays readable by readers that opened it before. Each writer
/// buffers its bytes privately and is registered as "incomplete" until it commits or aborts; a writer
/// destroyed without either leaves its registration behind (not its bytes), the way a crashed process
/// leaves a temporary file, so `remove_incomplete()` has something to reclaim and tests can tell whether a
/// caller aborted.
#include "storage/memory/memory_blob_store.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>

namespace depot::storage {
namespace {

using clock = std::chrono::system_clock;

/// Writers that reserve more than this up front on a size hint grow on demand instead.
constexpr std::uint64_t max_reserve = 64 * 1024 * 1024;

struct committed_blob
{
    std::vector<std::byte> bytes;
    clock::time_point modified;
};

struct state
{
    std::mutex mu;
    std::map<blob_id, std::shared_ptr<const committed_blob>, std::less<>> blobs;
    /// Writers that have neither committed nor aborted, with the time of their last write.
    std::map<blob_id, clock::time_point, std::less<>> incomplete;
};

class memory_writer final : public blob_writer
{
public:
    memory_writer(std::shared_ptr<state> st, blob_id id, std::uint64_t size_hint)
        : state_(std::move(st)), id_(std::move(id))
    {
        if (size_hint > 0)
            bytes_.reserve(static_cast<std::size_t>(std::min(size_hint, max_reserve)));
    }

    const blob_id& id() const noexcept override { return id_; }
    std::uint64_t size() const noexcept override { return size_; }

    asio::awaitable<result<void>> write(std::span<const std::byte> data) override
    {
        require_open("write");
        if (failed_)
            co_return reclaimed_error();
        {
            std::lock_guard lock(state_->mu);
            auto it = state_->incomplete.find(id_);
            if (it == state_->incomplete.end()) {
                failed_ = true;
                co_return reclaimed_error();
            }
            it->second = clock::now();
        }
        bytes_.insert(bytes_.end(), data.begin(), data.end());
        size_ += data.size();
        co_return ok();
    }

    asio::awaitable<result<void>> commit() override
    {
        require_open("commit");
        if (failed_)
            co_return reclaimed_error();
        auto blob = std::make_shared<committed_blob>(committed_blob{std::move(bytes_), clock::now()});
        std::lock_guard lock(state_->mu);
        if (state_->incomplete.erase(id_) == 0) {
            failed_ = true;
            co_return reclaimed_error();
        }
        state_->blobs.emplace(id_, std::move(blob));
        committed_ = true;
        co_return ok();
    }

    asio::awaitable<void> abort() override
    {
        if (committed_ || aborted_)
            co_return;
        aborted_ = true;
        bytes_ = {};
        std::lock_guard lock(state_->mu);
        state_->incomplete.erase(id_);
    }

private:
    void require_open(const char* op) const
    {
        if (committed_ || aborted_)
            throw std::logic_error(std::string("blob_writer::") + op + " after commit or abort");
    }

    static error reclaimed_error()
    {
        return make_error(errc::io_error,
                          "memory blob store: the unfinished blob was reclaimed by remove_incomplete");
    }

    std::shared_ptr<state> state_;
    blob_id id_;
    std::vector<std::byte> bytes_;
    std::uint64_t size_ = 0;
    bool committed_ = false;
    bool aborted_ = false;
    bool failed_ = false;
};

class memory_reader final : public blob_reader
{
public:
    memory_reader(std::shared_ptr<const committed_blob> blob, std::size_t begin, std::size_t end)
        : blob_(std::move(blob)), pos_(begin), end_(end)
    {}

    asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override
    {
        auto n = std::min(buf.size(), end_ - pos_);
        if (n > 0)
            std::memcpy(buf.data(), blob_->bytes.data() + pos_, n);
        pos_ += n;
        co_return n;
    }

private:
    std::shared_ptr<const committed_blob> blob_;
    std::size_t pos_;
    std::size_t end_;
};

class memory_blob_store final : public blob_store
{
public:
    asio::awaitable<result<std::unique_ptr<blob_writer>>> create(write_options options) override
    {
        auto id = make_random_blob_id();
        {
            std::lock_guard lock(state_->mu);
            state_->incomplete.emplace(id, clock::now());
        }
        co_return std::make_unique<memory_writer>(state_, std::move(id), options.size_hint);
    }

    asio::awaitable<result<std::unique_ptr<blob_reader>>> open(const blob_id& id, std::uint64_t offset,
                                                               std::uint64_t length) override
    {
        auto blob = find(id);
        if (!blob)
            co_return not_found(id);
        auto size = blob->bytes.size();
        if (offset > size)
            co_return make_error(errc::invalid_range, "offset is beyond the end of blob " + id);
        auto begin = static_cast<std::size_t>(offset);
        auto end = begin + static_cast<std::size_t>(std::min<std::uint64_t>(length, size - begin));
        co_return std::make_unique<memory_reader>(std::move(blob), begin, end);
    }

    asio::awaitable<result<blob_info>> stat(const blob_id& id) override
    {
        auto blob = find(id);
        if (!blob)
            co_return not_found(id);
        co_return blob_info{.size = blob->bytes.size(), .modified = blob->modified};
    }

    asio::awaitable<result<void>> remove(const blob_id& id) override
    {
        std::shared_ptr<const committed_blob> doomed; // freed outside the lock
        {
            std::lock_guard lock(state_->mu);
            auto it = state_->blobs.find(id);
            if (it == state_->blobs.end())
                co_return not_found(id);
            doomed = std::move(it->second);
            state_->blobs.erase(it);
        }
        co_return ok();
    }

    asio::awaitable<result<std::vector<blob_listing_entry>>> list(const blob_id& after,
                                                                  std::size_t limit) override
    {
        std::vector<blob_listing_entry> out;
        std::lock_guard lock(state_->mu);
        for (auto it = state_->blobs.upper_bound(after); it != state_->blobs.end() && out.size() < limit;
             ++it)
            out.push_back({it->first, {.size = it->second->bytes.size(), .modified = it->second->modified}});
        co_return out;
    }

    asio::awaitable<result<std::size_t>> remove_incomplete(clock::time_point older_than) override
    {
        std::lock_guard lock(state_->mu);
        auto removed =
            std::erase_if(state_->incomplete, [&](const auto& e) { return e.second < older_than; });
        co_return static_cast<std::size_t>(removed);
    }

    std::string_view kind() const noexcept override { return "memory"; }

private:
    std::shared_ptr<const committed_blob> find(const blob_id& id)
    {
        std::lock_guard lock(state_->mu);
        auto it = state_->blobs.find(id);
        return it == state_->blobs.end() ? nullptr : it->second;
    }

    static error not_found(const blob_id& id) { return make_error(errc::not_found, "no blob " + id); }

    std::shared_ptr<state> state_ = std::make_shared<state>();
};

} // namespace

std::unique_ptr<blob_store> make_memory_blob_store()
{
    return std::make_unique<memory_blob_store>();
}

} // namespace depot::storage
