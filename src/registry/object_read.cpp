// Reading object bytes: a byte source that walks an object's segments and opens only the blobs that overlap
// the requested range.
#include "registry/object_service.hpp"

#include <cstring>

namespace depot::registry {
namespace {

class segment_source final : public byte_source
{
public:
    segment_source(storage::blob_store& store, const std::vector<segment>& segments, std::uint64_t offset,
                   std::uint64_t length)
        : store_(store), segments_(segments), offset_(offset), remaining_(length)
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

private:
    /// Opens the segment containing offset_, positioned at offset_.
    asio::awaitable<result<void>> open_next()
    {
        std::uint64_t start = 0;
        for (const auto& s : segments_) {
            if (offset_ < start + s.length) {
                auto within = offset_ - start;
                auto len = std::min<std::uint64_t>(s.length - within, remaining_);
                auto r = co_await store_.open(s.store_id, s.offset + within, len);
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
};

/// A source whose first bytes were already read: they are returned first, then the rest of `inner`.
class started_source final : public byte_source
{
public:
    started_source(std::unique_ptr<byte_source> inner, std::vector<std::byte> head)
        : inner_(std::move(inner)), head_(std::move(head))
    {}

    asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override
    {
        if (used_ < head_.size()) {
            auto n = std::min(buf.size(), head_.size() - used_);
            std::memcpy(buf.data(), head_.data() + used_, n);
            used_ += n;
            if (used_ == head_.size())
                head_ = {};
            co_return n;
        }
        co_return co_await inner_->read_some(buf);
    }

private:
    std::unique_ptr<byte_source> inner_;
    std::vector<std::byte> head_;
    std::size_t used_ = 0;
};

constexpr std::size_t first_read = 256 << 10;

} // namespace

asio::awaitable<result<std::unique_ptr<byte_source>>>
object_service::read_started(const object_handle& handle, std::uint64_t offset, std::uint64_t length)
{
    auto source = read(handle, offset, length);
    if (length == 0)
        co_return source;
    std::vector<std::byte> head(static_cast<std::size_t>(std::min<std::uint64_t>(length, first_read)));
    auto n = co_await source->read_some(head);
    if (!n)
        co_return std::move(n).error();
    if (*n == 0)
        co_return make_error(errc::io_error, "blob is shorter than the object's manifest says");
    head.resize(*n);
    co_return std::unique_ptr<byte_source>(
        std::make_unique<started_source>(std::move(source), std::move(head)));
}

std::unique_ptr<byte_source> object_service::read(const object_handle& handle, std::uint64_t offset,
                                                  std::uint64_t length)
{
    return std::make_unique<segment_source>(store_, handle.segments, offset, length);
}

} // namespace depot::registry
