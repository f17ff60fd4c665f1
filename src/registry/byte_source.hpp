#pragma once
/// \file
/// A pull-based source of bytes (a request body, a decoded aws-chunked stream, a blob range).

#include "common/result.hpp"

#include <algorithm>
#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <span>
#include <vector>

namespace depot::registry {

class byte_source
{
public:
    virtual ~byte_source() = default;
    /// Reads up to buf.size() bytes; 0 means the end. Errors: incomplete_body when the peer went away early,
    /// and whatever the producer verifies (signature_does_not_match, bad_digest, ...).
    virtual boost::asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) = 0;

    /// Up to `max` (> 0) bytes without copying them where the source already holds them in memory (a blob
    /// read from RADOS): the span points into the source's own storage and stays valid until the next call
    /// of read_some or read_view on it. Empty means the end. The default reads through read_some into a
    /// buffer of the source's own.
    virtual boost::asio::awaitable<result<std::span<const std::byte>>> read_view(std::size_t max)
    {
        view_buffer_.resize(std::min<std::size_t>(max, 1 << 20));
        auto n = co_await read_some(view_buffer_);
        if (!n)
            co_return std::move(n).error();
        co_return std::span<const std::byte>(view_buffer_.data(), *n);
    }

private:
    std::vector<std::byte> view_buffer_;
};

} // namespace depot::registry
