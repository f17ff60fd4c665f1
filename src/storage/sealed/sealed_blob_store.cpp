#include "storage/sealed/sealed_blob_store.hpp"

#include "storage/sealed/sealed_format.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace depot::storage {
namespace {

using namespace sealed;

error tampered()
{
    return make_error(errc::io_error,
                      "an encrypted blob failed authentication (altered, truncated, or sealed "
                      "under another key)");
}

class sealed_writer final : public blob_writer
{
public:
    sealed_writer(std::unique_ptr<blob_writer> inner, const std::string& wrapping_key)
        : inner_(std::move(inner)), header_(make_header(wrapping_key, key_))
    {
        plain_.reserve(segment_plain);
    }

    const blob_id& id() const noexcept override { return inner_->id(); }

    asio::awaitable<result<void>> write(std::span<const std::byte> data) override
    {
        if (done_)
            throw std::logic_error("sealed_writer: write after commit or abort");
        if (failed_)
            co_return make_error(errc::io_error, "the writer failed earlier");
        while (!data.empty()) {
            // A full segment goes out only once more bytes follow: the last one is sealed as final at commit.
            if (plain_.size() == segment_plain) {
                auto flushed = co_await flush(false);
                if (!flushed)
                    co_return flushed;
            }
            const auto take = std::min(data.size(), segment_plain - plain_.size());
            plain_.insert(plain_.end(), data.begin(), data.begin() + static_cast<std::ptrdiff_t>(take));
            data = data.subspan(take);
            size_ += take;
        }
        co_return ok();
    }

    asio::awaitable<result<void>> commit() override
    {
        if (done_)
            throw std::logic_error("sealed_writer: commit after commit or abort");
        if (failed_)
            co_return make_error(errc::io_error, "the writer failed earlier");
        auto flushed = co_await flush(true);
        if (!flushed)
            co_return flushed;
        auto committed = co_await inner_->commit();
        if (!committed) {
            failed_ = true;
            co_return committed;
        }
        done_ = true;
        co_return ok();
    }

    asio::awaitable<void> abort() override
    {
        if (!done_)
            co_await inner_->abort();
        done_ = true;
    }

    std::uint64_t size() const noexcept override { return size_; }

private:
    asio::awaitable<result<void>> flush(bool final)
    {
        out_.clear();
        if (index_ == 0)
            out_.insert(out_.end(), reinterpret_cast<const std::byte*>(header_.data()),
                        reinterpret_cast<const std::byte*>(header_.data()) + header_.size());
        const auto at = out_.size();
        out_.resize(at + plain_.size() + tag_size);
        seal_segment(key_, index_, final, plain_, std::span<std::byte>(out_).subspan(at));
        ++index_;
        plain_.clear();
        auto written = co_await inner_->write(out_);
        if (!written)
            failed_ = true;
        co_return written;
    }

    std::unique_ptr<blob_writer> inner_;
    blob_key key_;
    std::string header_;
    std::vector<std::byte> plain_;
    std::vector<std::byte> out_;
    std::uint64_t index_ = 0;
    std::uint64_t size_ = 0;
    bool failed_ = false;
    bool done_ = false;
};

class sealed_reader final : public blob_reader
{
public:
    /// Serves plaintext [offset, offset + length) of a blob of `plain` bytes from `inner`, which is
    /// positioned at the start of the segment holding `offset`.
    sealed_reader(std::unique_ptr<blob_reader> inner, const blob_key& key, std::uint64_t plain,
                  std::uint64_t offset, std::uint64_t length)
        : inner_(std::move(inner)), key_(key), plain_size_(plain), index_(offset / segment_plain),
          skip_(offset % segment_plain), remaining_(length)
    {}

    asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override
    {
        if (remaining_ == 0 || buf.empty())
            co_return std::size_t{0};
        if (view_.empty()) {
            auto loaded = co_await load();
            if (!loaded)
                co_return std::move(loaded).error();
        }
        const auto n =
            static_cast<std::size_t>(std::min<std::uint64_t>({buf.size(), view_.size(), remaining_}));
        std::memcpy(buf.data(), view_.data(), n);
        view_ = view_.subspan(n);
        remaining_ -= n;
        co_return n;
    }

private:
    /// Reads, authenticates and decrypts segment index_ into plain_, and points view_ at what is wanted of
    /// it.
    asio::awaitable<result<void>> load()
    {
        const std::uint64_t count = segment_count(plain_size_);
        if (index_ >= count)
            co_return make_error(errc::io_error, "read beyond the end of an encrypted blob");
        const bool final = index_ + 1 == count;
        const std::uint64_t seg_plain = final ? plain_size_ - index_ * segment_plain : segment_plain;
        const auto want = static_cast<std::size_t>(seg_plain + tag_size);
        sealed_.resize(want);
        std::size_t filled = 0;
        while (filled < want) {
            auto n = co_await inner_->read_some(std::span<std::byte>(sealed_).subspan(filled));
            if (!n)
                co_return std::move(n).error();
            if (*n == 0)
                co_return tampered();
            filled += *n;
        }
        plain_.resize(static_cast<std::size_t>(seg_plain));
        if (!open_segment(key_, index_, final, sealed_, plain_))
            co_return tampered();
        ++index_;
        view_ = std::span<const std::byte>(plain_).subspan(static_cast<std::size_t>(skip_));
        skip_ = 0;
        co_return ok();
    }

    std::unique_ptr<blob_reader> inner_;
    blob_key key_;
    std::uint64_t plain_size_;
    std::uint64_t index_;
    std::uint64_t skip_;
    std::uint64_t remaining_;
    std::vector<std::byte> sealed_;
    std::vector<std::byte> plain_;
    std::span<const std::byte> view_;
};

class sealed_blob_store final : public blob_store
{
public:
    sealed_blob_store(blob_store& inner, std::string wrapping_key)
        : inner_(inner), wrapping_key_(std::move(wrapping_key))
    {
        if (wrapping_key_.size() != key_size)
            throw std::invalid_argument("sealed_blob_store: the wrapping key must be 32 bytes");
    }

    asio::awaitable<result<std::unique_ptr<blob_writer>>> create(write_options options) override
    {
        if (options.size_hint > 0)
            options.size_hint = sealed_size(options.size_hint);
        auto w = co_await inner_.create(options);
        if (!w)
            co_return std::move(w).error();
        co_return std::unique_ptr<blob_writer>(std::make_unique<sealed_writer>(std::move(*w), wrapping_key_));
    }

    asio::awaitable<result<std::unique_ptr<blob_reader>>> open(const blob_id& id, std::uint64_t offset,
                                                               std::uint64_t length) override
    {
        auto info = co_await inner_.stat(id);
        if (!info)
            co_return std::move(info).error();
        const auto plain = plain_size(info->size);
        if (!plain)
            co_return tampered();
        if (offset > *plain)
            co_return make_error(errc::invalid_range, "offset beyond the end of the blob");
        length = std::min(length, *plain - offset);
        auto header = co_await read_all(inner_, id, 0, header_size);
        if (!header)
            co_return std::move(header).error();
        auto key = open_header(wrapping_key_, std::as_bytes(std::span(header->data(), header->size())));
        if (!key)
            co_return tampered();
        const std::uint64_t first = offset / segment_plain;
        const std::uint64_t start = header_size + first * segment_sealed;
        // Through the end of the segment holding the last byte wanted (the first one for an empty range).
        const std::uint64_t last = length == 0 ? first : (offset + length - 1) / segment_plain;
        const std::uint64_t end = std::min(info->size, header_size + (last + 1) * segment_sealed);
        auto r = co_await inner_.open(id, start, end - start);
        if (!r)
            co_return std::move(r).error();
        co_return std::unique_ptr<blob_reader>(
            std::make_unique<sealed_reader>(std::move(*r), *key, *plain, offset, length));
    }

    asio::awaitable<result<blob_info>> stat(const blob_id& id) override
    {
        auto info = co_await inner_.stat(id);
        if (!info)
            co_return info;
        const auto plain = plain_size(info->size);
        if (!plain)
            co_return tampered();
        info->size = *plain;
        co_return info;
    }

    asio::awaitable<result<void>> remove(const blob_id& id) override { co_return co_await inner_.remove(id); }

    asio::awaitable<result<std::vector<blob_listing_entry>>> list(const blob_id& after,
                                                                  std::size_t limit) override
    {
        auto listed = co_await inner_.list(after, limit);
        if (listed)
            for (auto& e : *listed)
                e.info.size = plain_size(e.info.size).value_or(0);
        co_return listed;
    }

    asio::awaitable<result<std::size_t>>
    remove_incomplete(std::chrono::system_clock::time_point older_than) override
    {
        co_return co_await inner_.remove_incomplete(older_than);
    }

    std::string_view kind() const noexcept override { return inner_.kind(); }

private:
    blob_store& inner_;
    std::string wrapping_key_;
};

} // namespace

std::unique_ptr<blob_store> make_sealed_blob_store(blob_store& inner, std::string wrapping_key)
{
    return std::make_unique<sealed_blob_store>(inner, std::move(wrapping_key));
}

} // namespace depot::storage
