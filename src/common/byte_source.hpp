#pragma once
/// \file
/// A pull-based source of bytes: a request body, a decoded aws-chunked stream, a byte range of a stored blob
/// (storage::blob_reader is this interface), an object's content assembled from its segments. One interface
/// from the socket to the store, so a handler can hand a blob reader to whatever reads a body.

#include "common/result.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <span>
#include <vector>

namespace depot {

class byte_source
{
public:
    virtual ~byte_source() = default;
    /// Reads up to buf.size() bytes; 0 means the end. Errors: incomplete_body when the peer went away early,
    /// and whatever the producer verifies (signature_does_not_match, bad_digest, ...) or the store reports.
    virtual boost::asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) = 0;

    /// Up to `max` (> 0) bytes without copying them where the source already holds them in memory (RADOS
    /// hands over whole stripes): the span points into the source's own storage and stays valid until the
    /// next call of read_some or read_view on it. Empty means the end. The default reads through read_some
    /// into a buffer of the source's own (at most 1 MiB).
    virtual boost::asio::awaitable<result<std::span<const std::byte>>> read_view(std::size_t max);

private:
    std::vector<std::byte> view_buffer_;
};

} // namespace depot
