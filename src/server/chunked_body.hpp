#pragma once
/// \file
/// The decoded payload of an aws-chunked request body (Content-Encoding: aws-chunked), as a byte source.
/// Chunk and trailer signatures are verified by the decoder as chunks complete; the end of the source is
/// reported only after the final chunk and the trailer section verified, so a consumer that publishes on
/// end-of-stream never publishes an unverified body.

#include "auth/aws_chunked.hpp"
#include "common/byte_source.hpp"

#include <vector>

namespace depot::server {

class chunked_body final : public depot::byte_source
{
public:
    /// `raw` (the HTTP body) must outlive this object.
    chunked_body(depot::byte_source& raw, auth::aws_chunked_decoder decoder);

    boost::asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override;

    /// Trailers (e.g. x-amz-checksum-crc32), complete once read_some returned 0.
    const auth::aws_chunked_decoder& decoder() const noexcept { return decoder_; }

private:
    depot::byte_source& raw_;
    auth::aws_chunked_decoder decoder_;
    std::vector<std::byte> raw_buf_;
    std::vector<std::byte> pending_; ///< decoded bytes not yet handed out
    std::size_t pending_pos_ = 0;
    bool finished_ = false;
};

} // namespace depot::server
