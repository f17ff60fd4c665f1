#include "storage/cache/cached_blob_store.hpp"

#include "storage/offload.hpp"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <list>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

namespace depot::storage {
namespace {

namespace fs = std::filesystem;

using chunk_data = std::shared_ptr<const std::string>;
using fill_channel = asio::experimental::concurrent_channel<void(boost::system::error_code)>;

/// More remembered blob sizes than this and the map starts over (it only saves stat() calls).
constexpr std::size_t max_known_sizes = 1 << 20;

/// Chunks a sequential reader (or a prefetch) fetches ahead of the one it needs, in the background, so a
/// cold read keeps several blob-store reads in flight instead of one chunk at a time.
constexpr std::uint64_t read_ahead_chunks = 4;

struct chunk_key
{
    blob_id id;
    std::uint64_t index = 0;
    bool operator==(const chunk_key&) const = default;
};

struct chunk_key_hash
{
    std::size_t operator()(const chunk_key& k) const noexcept
    {
        return std::hash<std::string>{}(k.id) ^ (std::hash<std::uint64_t>{}(k.index) * 0x9e3779b97f4a7c15ULL);
    }
};

/// One fetch in flight; waiters receive on `done`, which the filler closes once `outcome` is set.
struct fill
{
    explicit fill(const asio::any_io_executor& ex) : done(ex, 1) {}
    fill_channel done;
    std::optional<result<chunk_data>> outcome; ///< under the store's mutex
};

/// An LRU of entries with a byte size; `Value` is the payload (chunk data or a disk path).
template <class Value>
class lru
{
public:
    struct entry
    {
        Value value;
        std::uint64_t size = 0;
        typename std::list<chunk_key>::iterator pos;
    };

    Value* find(const chunk_key& k)
    {
        auto it = map_.find(k);
        if (it == map_.end())
            return nullptr;
        order_.splice(order_.begin(), order_, it->second.pos);
        return &it->second.value;
    }

    /// Inserts (or replaces) and returns the evicted entries, oldest first, so that bytes() <= bound.
    std::vector<Value> insert(const chunk_key& k, Value v, std::uint64_t size, std::uint64_t bound)
    {
        std::vector<Value> evicted;
        if (auto old = erase(k))
            evicted.push_back(std::move(*old));
        order_.push_front(k);
        map_.emplace(k, entry{std::move(v), size, order_.begin()});
        bytes_ += size;
        while (bytes_ > bound && !order_.empty()) {
            auto victim = erase(order_.back());
            evicted.push_back(std::move(*victim));
        }
        return evicted;
    }

    bool contains(const chunk_key& k) const { return map_.contains(k); }

    std::optional<Value> erase(const chunk_key& k)
    {
        auto it = map_.find(k);
        if (it == map_.end())
            return std::nullopt;
        Value v = std::move(it->second.value);
        bytes_ -= it->second.size;
        order_.erase(it->second.pos);
        map_.erase(it);
        return v;
    }

    std::uint64_t bytes() const noexcept { return bytes_; }

private:
    std::list<chunk_key> order_; ///< most recently used first
    std::unordered_map<chunk_key, entry, chunk_key_hash> map_;
    std::uint64_t bytes_ = 0;
};

struct cache_instruments
{
    metrics::counter* memory_hits;
    metrics::counter* disk_hits;
    metrics::counter* misses;
    metrics::gauge* memory_bytes;
    metrics::gauge* disk_bytes;
    metrics::counter* memory_evictions;
    metrics::counter* disk_evictions;
};

cache_instruments register_cache_instruments(metrics::registry& reg)
{
    auto& hits =
        reg.counters("depot_cache_hits_total", "Read-cache chunks served from the cache, by tier.", {"tier"});
    auto& bytes =
        reg.gauges("depot_cache_bytes", "Bytes of chunk data held by the read cache, by tier.", {"tier"});
    auto& evictions = reg.counters("depot_cache_evictions_total",
                                   "Read-cache chunks evicted to stay within the tier's bound.", {"tier"});
    return {.memory_hits = &hits.add({"memory"}),
            .disk_hits = &hits.add({"disk"}),
            .misses = &reg.counter_metric("depot_cache_misses_total",
                                          "Read-cache chunks fetched from the blob store."),
            .memory_bytes = &bytes.add({"memory"}),
            .disk_bytes = &bytes.add({"disk"}),
            .memory_evictions = &evictions.add({"memory"}),
            .disk_evictions = &evictions.add({"disk"})};
}

std::optional<std::string> read_file(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    if (!in)
        return std::nullopt;
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad())
        return std::nullopt;
    return data;
}

bool write_file(const fs::path& p, const std::string& data)
{
    const fs::path tmp = p.string() + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out)
            return false;
        out.write(data.data(), static_cast<std::streamsize>(data.size()));
        if (!out.flush())
            return false;
    }
    std::error_code ec;
    fs::rename(tmp, p, ec);
    if (ec)
        fs::remove(tmp, ec);
    return !ec;
}

class cache_store;

class cached_reader final : public blob_reader
{
public:
    cached_reader(std::shared_ptr<cache_store> store, blob_id id, std::uint64_t pos, std::uint64_t end,
                  std::uint64_t size)
        : store_(std::move(store)), id_(std::move(id)), pos_(pos), end_(end), size_(size)
    {}

    asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override;

private:
    std::shared_ptr<cache_store> store_;
    blob_id id_;
    std::uint64_t pos_;
    std::uint64_t end_;
    std::uint64_t size_;
    chunk_data chunk_;
    std::uint64_t chunk_index_ = UINT64_MAX;
};

class cache_store final : public cached_blob_store, public std::enable_shared_from_this<cache_store>
{
public:
    cache_store(std::shared_ptr<blob_store> inner, cache_options o, metrics::registry& reg)
        : inner_(std::move(inner)), opts_(std::move(o)), m_(register_cache_instruments(reg))
    {
        if (opts_.chunk_size == 0)
            throw std::invalid_argument("cache chunk size must be positive");
        if (opts_.disk_dir.empty())
            opts_.disk_bytes = 0;
        if (opts_.disk_bytes > 0) {
            std::error_code ec;
            fs::create_directories(opts_.disk_dir, ec);
            if (!ec)
                for (const auto& e : fs::directory_iterator(opts_.disk_dir, ec))
                    if (e.path().extension() == ".chunk" || e.path().extension() == ".tmp")
                        fs::remove(e.path(), ec);
            if (ec)
                throw std::runtime_error("cache directory " + opts_.disk_dir + ": " + ec.message());
        }
    }

    ~cache_store() override
    {
        m_.memory_bytes->sub(static_cast<std::int64_t>(memory_.bytes()));
        m_.disk_bytes->sub(static_cast<std::int64_t>(disk_.bytes()));
    }

    asio::awaitable<result<std::unique_ptr<blob_writer>>> create(write_options options) override
    {
        co_return co_await inner_->create(options);
    }

    asio::awaitable<result<std::unique_ptr<blob_reader>>> open(const blob_id& id, std::uint64_t offset,
                                                               std::uint64_t length) override
    {
        auto r = co_await range_of(id, offset, length);
        if (!r)
            co_return std::move(r).error();
        co_return std::make_unique<cached_reader>(shared_from_this(), id, offset, r->end, r->size);
    }

    asio::awaitable<result<blob_info>> stat(const blob_id& id) override
    {
        auto r = co_await inner_->stat(id);
        if (r)
            remember_size(id, r->size);
        co_return r;
    }

    asio::awaitable<result<void>> remove(const blob_id& id) override
    {
        auto r = co_await inner_->remove(id);
        std::vector<std::string> paths;
        {
            std::lock_guard lock(mu_);
            if (auto it = sizes_.find(id); it != sizes_.end()) {
                const std::uint64_t chunks = (it->second + opts_.chunk_size - 1) / opts_.chunk_size;
                for (std::uint64_t i = 0; i < chunks; ++i) {
                    const chunk_key k{id, i};
                    if (auto d = memory_.erase(k))
                        m_.memory_bytes->sub(static_cast<std::int64_t>((*d)->size()));
                    const auto before = disk_.bytes();
                    if (auto p = disk_.erase(k)) {
                        m_.disk_bytes->sub(static_cast<std::int64_t>(before - disk_.bytes()));
                        paths.push_back(std::move(*p));
                    }
                }
                sizes_.erase(it);
            }
        }
        co_await unlink(std::move(paths));
        co_return r;
    }

    asio::awaitable<result<std::vector<blob_listing_entry>>> list(const blob_id& after,
                                                                  std::size_t limit) override
    {
        co_return co_await inner_->list(after, limit);
    }

    asio::awaitable<result<std::size_t>>
    remove_incomplete(std::chrono::system_clock::time_point older_than) override
    {
        co_return co_await inner_->remove_incomplete(older_than);
    }

    std::string_view kind() const noexcept override { return inner_->kind(); }

    asio::awaitable<result<std::uint64_t>> prefetch(const blob_id& id, std::uint64_t offset,
                                                    std::uint64_t length) override
    {
        auto r = co_await range_of(id, offset, length);
        if (!r)
            co_return std::move(r).error();
        const std::uint64_t end = r->end;
        const auto size = r->size;
        const auto ex = co_await asio::this_coro::executor;
        const std::uint64_t last = end == 0 ? 0 : (end - 1) / opts_.chunk_size;
        for (std::uint64_t i = offset / opts_.chunk_size; i * opts_.chunk_size < end; ++i) {
            read_ahead(ex, id, i + 1, std::min(last + 1, i + 1 + read_ahead_chunks), size);
            auto c = co_await chunk(id, i, size);
            if (!c)
                co_return std::move(c).error();
        }
        co_return end - offset;
    }

    cache_stats stats() const override
    {
        std::lock_guard lock(mu_);
        return {.memory_hits = memory_hits_,
                .disk_hits = disk_hits_,
                .misses = misses_,
                .memory_bytes = memory_.bytes(),
                .disk_bytes = disk_.bytes(),
                .memory_evictions = memory_evictions_,
                .disk_evictions = disk_evictions_};
    }

    const cache_options& options() const noexcept override { return opts_; }

    /// Chunk `index` of blob `id` (of `size` bytes): from memory, from disk, or fetched once from the inner
    /// store while concurrent callers for the same chunk wait for that fetch.
    asio::awaitable<result<chunk_data>> chunk(const blob_id& id, std::uint64_t index, std::uint64_t size)
    {
        const chunk_key key{id, index};
        const auto ex = co_await asio::this_coro::executor;
        std::shared_ptr<fill> f;
        bool filler = false;
        {
            std::lock_guard lock(mu_);
            if (auto* d = memory_.find(key)) {
                ++memory_hits_;
                m_.memory_hits->inc();
                co_return *d;
            }
            if (auto it = fills_.find(key); it != fills_.end()) {
                f = it->second;
            } else {
                f = std::make_shared<fill>(ex);
                fills_.emplace(key, f);
                filler = true;
            }
        }
        if (!filler) {
            boost::system::error_code ec;
            co_await f->done.async_receive(asio::redirect_error(asio::use_awaitable, ec));
            std::lock_guard lock(mu_);
            if (!f->outcome)
                co_return error{errc::unavailable, "the cache fill was abandoned"};
            if (*f->outcome) {
                ++memory_hits_;
                m_.memory_hits->inc();
            }
            co_return *f->outcome;
        }
        co_return co_await run_fill(key, size, std::move(f));
    }

    /// Starts background fetches of chunks [from, to) of a blob of `size` bytes that are neither in memory
    /// nor being fetched; readers of them wait for those fetches. Nothing without a memory tier (the data
    /// would have nowhere to go).
    void read_ahead(const asio::any_io_executor& ex, const blob_id& id, std::uint64_t from, std::uint64_t to,
                    std::uint64_t size)
    {
        if (opts_.memory_bytes == 0)
            return;
        for (std::uint64_t i = from; i < to && i * opts_.chunk_size < size; ++i) {
            chunk_key key{id, i};
            std::shared_ptr<fill> f;
            {
                std::lock_guard lock(mu_);
                if (memory_.contains(key) || fills_.contains(key))
                    continue;
                f = std::make_shared<fill>(ex);
                fills_.emplace(key, f);
            }
            asio::co_spawn(ex, fill_in_background(shared_from_this(), std::move(key), size, std::move(f)),
                           asio::detached);
        }
    }

private:
    friend class cached_reader;

    /// Completes a fill also when the filling coroutine is destroyed or throws, so waiters never hang.
    struct completion
    {
        cache_store* self;
        chunk_key key;
        std::shared_ptr<fill> f;
        ~completion()
        {
            {
                std::lock_guard lock(self->mu_);
                self->fills_.erase(key);
            }
            f->done.close();
        }
    };

    /// Loads the chunk of fill `f` (registered in fills_ by the caller) and hands the outcome to its waiters.
    asio::awaitable<result<chunk_data>> run_fill(chunk_key key, std::uint64_t size, std::shared_ptr<fill> f)
    {
        completion done{this, key, f};
        auto r = co_await load(key, size);
        {
            std::lock_guard lock(mu_);
            f->outcome = r;
        }
        co_return r;
    }

    static asio::awaitable<void> fill_in_background(std::shared_ptr<cache_store> self, chunk_key key,
                                                    std::uint64_t size, std::shared_ptr<fill> f)
    {
        // The outcome is kept in the fill for the readers waiting on it; nobody waits for this coroutine.
        auto outcome = co_await self->run_fill(std::move(key), size, std::move(f));
        (void)outcome;
    }

    void remember_size(const blob_id& id, std::uint64_t size)
    {
        std::lock_guard lock(mu_);
        if (sizes_.size() >= max_known_sizes && !sizes_.contains(id))
            sizes_.clear();
        sizes_[id] = size;
    }

    asio::awaitable<result<std::uint64_t>> size_of(const blob_id& id)
    {
        {
            std::lock_guard lock(mu_);
            if (auto it = sizes_.find(id); it != sizes_.end())
                co_return it->second;
        }
        auto info = co_await stat(id);
        if (!info)
            co_return std::move(info).error();
        co_return info->size;
    }

    struct blob_range
    {
        std::uint64_t size = 0; ///< of the whole blob
        std::uint64_t end = 0;  ///< one past the last byte asked for, clamped to the blob
    };

    /// Where a read of `length` bytes from `offset` ends in blob `id`; invalid_range past the end.
    asio::awaitable<result<blob_range>> range_of(const blob_id& id, std::uint64_t offset,
                                                 std::uint64_t length)
    {
        auto size = co_await size_of(id);
        if (!size)
            co_return std::move(size).error();
        if (offset > *size)
            co_return error{errc::invalid_range, "offset beyond the end of the blob"};
        blob_range r;
        r.size = *size;
        r.end = offset + std::min(length, *size - offset);
        co_return r;
    }

    asio::awaitable<void> unlink(std::vector<std::string> paths)
    {
        if (paths.empty())
            co_return;
        auto f = [paths = std::move(paths)] {
            std::error_code ec;
            for (const auto& p : paths)
                fs::remove(p, ec);
        };
        co_await run_blocking(pool_, std::move(f));
    }

    /// The chunk from disk or, failing that, from the inner store; then kept in memory (and written to disk
    /// when it came from the inner store).
    asio::awaitable<result<chunk_data>> load(const chunk_key& key, std::uint64_t size)
    {
        const std::uint64_t offset = key.index * opts_.chunk_size;
        if (offset >= size)
            co_return error{errc::invalid_range, "chunk beyond the end of the blob"};
        const std::uint64_t length = std::min(opts_.chunk_size, size - offset);
        std::optional<std::string> path;
        if (opts_.disk_bytes > 0) {
            std::lock_guard lock(mu_);
            if (auto* p = disk_.find(key))
                path = *p;
        }
        if (path) {
            auto f = [p = *path] { return read_file(p); };
            auto data = co_await run_blocking(pool_, std::move(f));
            if (data && data->size() == length) {
                auto c = std::make_shared<const std::string>(std::move(*data));
                {
                    std::lock_guard lock(mu_);
                    ++disk_hits_;
                    m_.disk_hits->inc();
                }
                keep_in_memory(key, c);
                co_return c;
            }
            // Gone (evicted meanwhile) or damaged: forget it and fetch.
            std::vector<std::string> stale;
            {
                std::lock_guard lock(mu_);
                const auto before = disk_.bytes();
                if (auto p = disk_.erase(key)) {
                    m_.disk_bytes->sub(static_cast<std::int64_t>(before - disk_.bytes()));
                    stale.push_back(std::move(*p));
                }
            }
            co_await unlink(std::move(stale));
        }
        auto reader = co_await inner_->open(key.id, offset, length);
        if (!reader)
            co_return std::move(reader).error();
        std::string data(length, '\0');
        std::uint64_t got = 0;
        while (got < length) {
            auto n = co_await (*reader)->read_some(
                std::as_writable_bytes(std::span<char>(data.data() + got, length - got)));
            if (!n)
                co_return std::move(n).error();
            if (*n == 0)
                co_return error{errc::io_error, "blob " + key.id + " ended early"};
            got += *n;
        }
        auto c = std::make_shared<const std::string>(std::move(data));
        {
            std::lock_guard lock(mu_);
            ++misses_;
            m_.misses->inc();
        }
        keep_in_memory(key, c);
        if (opts_.disk_bytes > 0 && length <= opts_.disk_bytes)
            co_await keep_on_disk(key, c);
        co_return c;
    }

    void keep_in_memory(const chunk_key& key, const chunk_data& c)
    {
        if (c->size() > opts_.memory_bytes)
            return;
        std::lock_guard lock(mu_);
        const auto before = memory_.bytes();
        auto evicted = memory_.insert(key, c, c->size(), opts_.memory_bytes);
        m_.memory_bytes->add(static_cast<std::int64_t>(memory_.bytes()) - static_cast<std::int64_t>(before));
        memory_evictions_ += evicted.size();
        m_.memory_evictions->inc(evicted.size());
    }

    asio::awaitable<void> keep_on_disk(const chunk_key& key, const chunk_data& c)
    {
        std::string path;
        {
            std::lock_guard lock(mu_);
            path = (fs::path(opts_.disk_dir) / (key.id + "." + std::to_string(key.index) + "." +
                                                std::to_string(++generation_) + ".chunk"))
                       .string();
        }
        auto write = [path, c] { return write_file(path, *c); };
        if (!co_await run_blocking(pool_, std::move(write)))
            co_return; // a full or broken disk only costs the disk tier
        std::vector<std::string> evicted;
        {
            std::lock_guard lock(mu_);
            const auto before = disk_.bytes();
            evicted = disk_.insert(key, path, c->size(), opts_.disk_bytes);
            m_.disk_bytes->add(static_cast<std::int64_t>(disk_.bytes()) - static_cast<std::int64_t>(before));
            // insert() also returns a replaced entry of the same key, which is not an eviction.
            disk_evictions_ += evicted.size();
            m_.disk_evictions->inc(evicted.size());
        }
        co_await unlink(std::move(evicted));
    }

    std::shared_ptr<blob_store> inner_;
    cache_options opts_;
    cache_instruments m_;
    asio::thread_pool pool_{1};

    mutable std::mutex mu_;
    lru<chunk_data> memory_;
    lru<std::string> disk_; ///< file paths
    std::unordered_map<chunk_key, std::shared_ptr<fill>, chunk_key_hash> fills_;
    std::unordered_map<blob_id, std::uint64_t> sizes_;
    std::uint64_t generation_ = 0;
    std::uint64_t memory_hits_ = 0, disk_hits_ = 0, misses_ = 0, memory_evictions_ = 0, disk_evictions_ = 0;
};

asio::awaitable<result<std::size_t>> cached_reader::read_some(std::span<std::byte> buf)
{
    if (pos_ >= end_ || buf.empty())
        co_return std::size_t{0};
    const std::uint64_t chunk_size = store_->options().chunk_size;
    const std::uint64_t index = pos_ / chunk_size;
    if (index != chunk_index_) {
        chunk_.reset();
        const std::uint64_t last = (end_ - 1) / chunk_size;
        const auto ex = co_await asio::this_coro::executor;
        store_->read_ahead(ex, id_, index + 1, std::min(last + 1, index + 1 + read_ahead_chunks), size_);
        auto c = co_await store_->chunk(id_, index, size_);
        if (!c)
            co_return std::move(c).error();
        chunk_ = std::move(*c);
        chunk_index_ = index;
    }
    const std::uint64_t within = pos_ - index * chunk_size;
    const std::uint64_t n = std::min<std::uint64_t>({buf.size(), chunk_->size() - within, end_ - pos_});
    std::memcpy(buf.data(), chunk_->data() + within, n);
    pos_ += n;
    co_return static_cast<std::size_t>(n);
}

} // namespace

void register_cache_metrics(metrics::registry& registry)
{
    register_cache_instruments(registry);
}

std::shared_ptr<cached_blob_store> make_cached_blob_store(std::shared_ptr<blob_store> inner,
                                                          cache_options options, metrics::registry& registry)
{
    return std::make_shared<cache_store>(std::move(inner), std::move(options), registry);
}

} // namespace depot::storage
