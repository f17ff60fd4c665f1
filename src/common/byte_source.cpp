#include "common/byte_source.hpp"

#include <algorithm>

namespace depot {

boost::asio::awaitable<result<std::span<const std::byte>>> byte_source::read_view(std::size_t max)
{
    view_buffer_.resize(std::min<std::size_t>(max, 1 << 20));
    auto n = co_await read_some(view_buffer_);
    if (!n)
        co_return std::move(n).error();
    co_return std::span<const std::byte>(view_buffer_.data(), *n);
}

} // namespace depot
