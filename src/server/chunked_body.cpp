#include "server/chunked_body.hpp"

#include <cstring>

namespace depot::server {

chunked_body::chunked_body(depot::byte_source& raw, auth::aws_chunked_decoder decoder)
    : raw_(raw), decoder_(std::move(decoder)), raw_buf_(256 * 1024)
{
    pending_.reserve(raw_buf_.size());
}

boost::asio::awaitable<result<std::size_t>> chunked_body::read_some(std::span<std::byte> buf)
{
    while (pending_pos_ == pending_.size()) {
        if (finished_)
            co_return std::size_t{0};
        pending_.clear();
        pending_pos_ = 0;
        auto n = co_await raw_.read_some(raw_buf_);
        if (!n)
            co_return std::move(n).error();
        if (*n == 0) {
            auto end = decoder_.finish();
            if (!end)
                co_return std::move(end).error();
            finished_ = true;
            co_return std::size_t{0};
        }
        auto fed = decoder_.feed(
            std::span<const std::byte>(raw_buf_.data(), *n),
            [this](std::span<const std::byte> d) { pending_.insert(pending_.end(), d.begin(), d.end()); });
        if (!fed)
            co_return std::move(fed).error();
    }
    auto n = std::min(buf.size(), pending_.size() - pending_pos_);
    std::memcpy(buf.data(), pending_.data() + pending_pos_, n);
    pending_pos_ += n;
    co_return n;
}

} // namespace depot::server
