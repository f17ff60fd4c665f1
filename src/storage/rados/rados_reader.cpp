/// \file
/// The RADOS blob reader: reads only the stripes (and within them only the bytes) a range covers, with up
/// to `window` stripes read ahead and buffered (see rados_blob_store.cpp for the layout).
#include "storage/rados/cluster.hpp"

#include <algorithm>
#include <cstring>
#include <map>

namespace depot::storage::rados_detail {
namespace {

class rados_reader final : public blob_reader
{
public:
    rados_reader(std::shared_ptr<cluster> c, blob_id id, std::uint64_t stripe_size, bool inline_data,
                 std::uint64_t begin, std::uint64_t end)
        : c_(std::move(c)), id_(std::move(id)), stripe_size_(stripe_size), inline_(inline_data),
          begin_(begin), end_(end), pos_(begin), next_stripe_(begin / stripe_size),
          end_stripe_(end == begin ? begin / stripe_size : (end - 1) / stripe_size + 1)
    {}

    asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override
    {
        if (failed_)
            co_return *failed_;
        if (pos_ == end_ || buf.empty())
            co_return std::size_t{0};
        if (current_.length() == current_used_) {
            if (!co_await next_stripe()) // (not inside &&: GCC 12 coroutines)
                co_return *failed_;
        }
        auto n =
            static_cast<unsigned>(std::min<std::uint64_t>(buf.size(), current_.length() - current_used_));
        current_.begin(current_used_).copy(n, reinterpret_cast<char*>(buf.data()));
        current_used_ += n;
        pos_ += n;
        if (current_used_ == current_.length()) {
            current_.clear();
            current_used_ = 0;
        }
        // Keep the window full while the caller deals with these bytes.
        read_ahead();
        co_return std::size_t{n};
    }

    /// The bytes in place, in librados's own buffers: no copy on the way to the socket. The stripe they
    /// belong to is kept until the next call.
    asio::awaitable<result<std::span<const std::byte>>> read_view(std::size_t max) override
    {
        if (failed_)
            co_return *failed_;
        if (pos_ == end_ || max == 0)
            co_return std::span<const std::byte>();
        if (current_.length() == current_used_) {
            if (!co_await next_stripe()) // (not inside &&: GCC 12 coroutines)
                co_return *failed_;
        }
        const char* p = nullptr;
        auto n = current_.begin(current_used_)
                     .get_ptr_and_advance(std::min<std::size_t>(max, current_.length() - current_used_), &p);
        current_used_ += static_cast<unsigned>(n);
        pos_ += n;
        read_ahead();
        co_return std::span<const std::byte>(reinterpret_cast<const std::byte*>(p), n);
    }

    /// Hands over the bytes of the whole range, read with an inline blob's head: no read of its own follows.
    void prefetched(ceph::bufferlist data)
    {
        if (next_stripe_ >= end_stripe_)
            return;
        accept(aio_result{.tag = next_stripe_, .r = 0, .data = std::move(data)});
        next_stripe_ = end_stripe_;
    }

private:
    /// Makes the stripe holding pos_ current, waiting for its read; false (failed_ set) when a read failed.
    asio::awaitable<bool> next_stripe()
    {
        auto wanted = pos_ / stripe_size_;
        read_ahead();
        while (!arrived_.contains(wanted)) {
            auto done = co_await queue_->next();
            if (!accept(std::move(done)))
                co_return false;
        }
        auto it = arrived_.find(wanted);
        current_ = std::move(it->second);
        current_used_ = 0;
        arrived_.erase(it);
        co_return true;
    }

    /// The part of stripe `index` the range covers, as [first, last) blob offsets.
    std::pair<std::uint64_t, std::uint64_t> span_of(std::uint64_t index) const
    {
        auto first = std::max(begin_, index * stripe_size_);
        auto last = std::min(end_, (index + 1) * stripe_size_);
        return {first, last};
    }

    /// Starts reads of the next stripes while fewer than `window` stripes are in flight or buffered. A
    /// consumed stripe still held for read_view's caller does not count (it goes at the next call).
    void read_ahead()
    {
        auto buffered = [&] {
            return queue_->pending() + arrived_.size() + (current_used_ < current_.length());
        };
        while (next_stripe_ < end_stripe_ && buffered() < c_->options.window) {
            auto index = next_stripe_++;
            auto [first, last] = span_of(index);
            c_->stripe_reads.fetch_add(1, std::memory_order_relaxed);
            // An inline blob's only "stripe" is the head object itself.
            queue_->start(index, [&c = *c_, name = inline_ ? id_ : stripe_name(id_, index),
                                  off = first - index * stripe_size_, len = last - first](
                                     librados::AioCompletion* completion, ceph::bufferlist& out) {
                return c.io.aio_read(name, completion, &out, static_cast<std::size_t>(len), off);
            });
            cluster::note_peak(c_->peak_reads_in_flight, queue_->pending());
        }
    }

    bool accept(aio_result done)
    {
        auto [first, last] = span_of(done.tag);
        if (done.r < 0) {
            // A missing stripe under a committed head means the blob was removed while being read (or
            // damaged): either way the range cannot be served, and not_found would misdescribe a blob that
            // was there.
            failed_ =
                done.r == -ENOENT
                    ? make_error(errc::io_error, "rados: stripe " + std::to_string(done.tag) + " of blob " +
                                                     id_ + " is missing (removed while being read?)")
                    : rados_error(done.r, "reading stripe " + std::to_string(done.tag) + " of blob " + id_);
            return false;
        }
        if (done.data.length() != last - first) {
            failed_ = make_error(errc::io_error, "rados: stripe " + std::to_string(done.tag) + " of blob " +
                                                     id_ + " is shorter than its head says");
            return false;
        }
        arrived_.emplace(done.tag, std::move(done.data));
        return true;
    }

    std::shared_ptr<cluster> c_;
    blob_id id_;
    std::uint64_t stripe_size_;
    bool inline_;
    std::uint64_t begin_;
    std::uint64_t end_;
    std::uint64_t pos_;
    /// Stripes [next_stripe_, end_stripe_) have not been asked for yet.
    std::uint64_t next_stripe_;
    std::uint64_t end_stripe_;
    std::shared_ptr<aio_queue> queue_ = aio_queue::make();
    /// Stripes read ahead, waiting for their turn (reads complete in any order).
    std::map<std::uint64_t, ceph::bufferlist> arrived_;
    /// The stripe being handed out and how much of it has been.
    ceph::bufferlist current_;
    unsigned current_used_ = 0;
    std::optional<error> failed_;
};

} // namespace

std::unique_ptr<blob_reader> make_reader(std::shared_ptr<cluster> c, blob_id id, const head_info& head,
                                         std::uint64_t begin, std::uint64_t end,
                                         std::optional<ceph::bufferlist> prefetched)
{
    auto reader = std::make_unique<rados_reader>(std::move(c), std::move(id), head.stripe_size,
                                                 head.inline_data, begin, end);
    if (prefetched && head.inline_data)
        reader->prefetched(std::move(*prefetched));
    return reader;
}

} // namespace depot::storage::rados_detail
