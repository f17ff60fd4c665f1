#pragma once
/// \file
/// A completion condition for asio::async_write that offers the stream everything left in each write_some.
/// asio's own conditions (transfer_all, transfer_exactly) offer at most 64 KiB per call, so a 1 MiB buffer
/// costs 16 sendmsg calls, each a trip through the reactor; offered whole, one call moves as much as the
/// socket's send buffer takes (autotuned up to net.ipv4.tcp_wmem's maximum).
///
///     co_await asio::async_write(stream, asio::buffer(p, n), depot::transfer_whole{n}, asio::use_awaitable);

#include <boost/system/error_code.hpp>
#include <cstddef>

namespace depot {

struct transfer_whole
{
    /// The size of the buffer being written.
    std::size_t size;
    std::size_t operator()(const boost::system::error_code& ec, std::size_t done) const noexcept
    {
        return ec ? 0 : size - done;
    }
};

} // namespace depot
