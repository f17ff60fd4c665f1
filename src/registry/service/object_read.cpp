// Reading object bytes: a byte source that walks an object's segments and opens only the blobs that overlap
// the requested range.
#include "registry/service/object_service.hpp"

#include <cstring>

namespace depot::registry {
namespace {

class segment_source final : public byte_source
{
public:
    segment_source(storage::blob_store& store, const std::vector<segment>& segments, std::uint64_t offset,
                   std::uint64_t length, sse_keys keys)
        : store_(store), segments_(segments), offset_(offset), remaining_(length), keys_(std::move(keys))
    {}

    asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override
    {
        while (remaining_ > 0) {
            if (!reader_) {
                auto opened = co_await open_next();
                if (!opened)
                    co_return std::move(opened).error();
            }
            auto want = std::min<std::uint64_t>(buf.size(), remaining_);
            auto n = co_await reader_->read_some(buf.first(static_cast<std::size_t>(want)));
            if (!n)
                co_return std::move(n).error();
            if (*n == 0) {
                if (segment_left_ > 0)
                    co_return make_error(errc::io_error, "blob is shorter than the object's manifest says");
                reader_.reset();
                continue;
            }
            remaining_ -= *n;
            segment_left_ -= *n;
            co_return *n;
        }
        co_return std::size_t{0};
    }

    asio::awaitable<result<std::span<const std::byte>>> read_view(std::size_t max) override
    {
        while (remaining_ > 0) {
            if (!reader_) {
                auto opened = co_await open_next();
                if (!opened)
                    co_return std::move(opened).error();
            }
            auto want = static_cast<std::size_t>(std::min<std::uint64_t>(max, remaining_));
            auto v = co_await reader_->read_view(want);
            if (!v)
                co_return std::move(v).error();
            if (v->empty()) {
                if (segment_left_ > 0)
                    co_return make_error(errc::io_error, "blob is shorter than the object's manifest says");
                reader_.reset();
                continue;
            }
            remaining_ -= v->size();
            segment_left_ -= v->size();
            co_return *v;
        }
        co_return std::span<const std::byte>();
    }

private:
    /// Opens the segment containing offset_, positioned at offset_.
    asio::awaitable<result<void>> open_next()
    {
        std::uint64_t start = 0;
        for (const auto& s : segments_) {
            if (offset_ < start + s.length) {
                auto within = offset_ - start;
                auto len = std::min<std::uint64_t>(s.length - within, remaining_);
                // A sealed blob is read through a view that decrypts it (registry/service/sse.hpp).
                auto view = sealed_view(store_, s.sealed, keys_);
                if (!view)
                    co_return std::move(view).error();
                auto r = co_await (*view)->open(s.store_id, s.offset + within, len);
                if (!r)
                    co_return std::move(r).error();
                reader_ = std::move(*r);
                segment_left_ = len;
                offset_ += len;
                co_return ok();
            }
            start += s.length;
        }
        co_return make_error(errc::io_error, "object range is beyond its segments");
    }

    storage::blob_store& store_;
    const std::vector<segment>& segments_;
    std::uint64_t offset_;    ///< object offset where the next segment opens
    std::uint64_t remaining_; ///< bytes still to return
    std::uint64_t segment_left_ = 0;
    std::unique_ptr<storage::blob_reader> reader_;
    sse_keys keys_;
};

/// A source whose first bytes were already read (as a view into `inner`, which is not called again until
/// they are consumed): they are returned first, then the rest of `inner`.
class started_source final : public byte_source
{
public:
    started_source(std::unique_ptr<byte_source> inner, std::span<const std::byte> head)
        : inner_(std::move(inner)), head_(head)
    {}

    asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override
    {
        if (!head_.empty()) {
            auto n = std::min(buf.size(), head_.size());
            std::memcpy(buf.data(), head_.data(), n);
            head_ = head_.subspan(n);
            co_return n;
        }
        co_return co_await inner_->read_some(buf);
    }

    asio::awaitable<result<std::span<const std::byte>>> read_view(std::size_t max) override
    {
        if (!head_.empty()) {
            auto v = head_.first(std::min(max, head_.size()));
            head_ = head_.subspan(v.size());
            co_return v;
        }
        co_return co_await inner_->read_view(max);
    }

private:
    std::unique_ptr<byte_source> inner_;
    std::span<const std::byte> head_;
};

constexpr std::size_t first_read = 256 << 10;

} // namespace

asio::awaitable<result<std::unique_ptr<byte_source>>>
object_service::read_started(const object_handle& handle, std::uint64_t offset, std::uint64_t length)
{
    auto source = read(handle, offset, length);
    if (length == 0)
        co_return source;
    auto head = co_await source->read_view(first_read);
    if (!head)
        co_return std::move(head).error();
    if (head->empty())
        co_return make_error(errc::io_error, "blob is shorter than the object's manifest says");
    co_return std::unique_ptr<byte_source>(std::make_unique<started_source>(std::move(source), *head));
}

std::unique_ptr<byte_source> object_service::read(const object_handle& handle, std::uint64_t offset,
                                                  std::uint64_t length)
{
    return std::make_unique<segment_source>(
        store_, handle.segments, offset, length,
        sse_keys{.master = sse_master_key_, .customer = handle.customer_key});
}

} // namespace depot::registry
