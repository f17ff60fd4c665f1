#pragma once
/// \file
/// Object content for the tests (unit and integration): a byte_source over a string, and deterministic bytes.

#include "common/byte_source.hpp"

#include <algorithm>
#include <cstring>
#include <span>
#include <string>

namespace depot::test {

/// Hands out a string in pieces of at most `step` bytes.
class string_source final : public byte_source
{
public:
    explicit string_source(std::string data, std::size_t step = 100000) : data_(std::move(data)), step_(step)
    {}
    boost::asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override
    {
        auto n = std::min({buf.size(), step_, data_.size() - pos_});
        std::memcpy(buf.data(), data_.data() + pos_, n);
        pos_ += n;
        co_return n;
    }

private:
    std::string data_;
    std::size_t step_;
    std::size_t pos_ = 0;
};

/// n bytes that depend on `seed` and differ from one offset to the next.
inline std::string content(std::size_t n, char seed)
{
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i)
        s[i] = static_cast<char>(seed + static_cast<char>(i * 31 % 251));
    return s;
}

} // namespace depot::test
