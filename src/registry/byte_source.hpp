#pragma once
/// \file
/// A pull-based source of bytes (a request body, a decoded aws-chunked stream, a blob range).

#include "common/result.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <span>

namespace depot::registry {

class byte_source
{
public:
    virtual ~byte_source() = default;
    /// Reads up to buf.size() bytes; 0 means the end. Errors: incomplete_body when the peer went away early,
    /// and whatever the producer verifies (signature_does_not_match, bad_digest, ...).
    virtual boost::asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) = 0;
};

} // namespace depot::registry
