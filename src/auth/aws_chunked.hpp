#pragma once
/// \file
/// Incremental decoder for `Content-Encoding: aws-chunked` request bodies (AWS "Transferring Payload in
/// Multiple Chunks" and "Signature calculations for trailing headers").
///
/// Wire format:
///     hex-size[;chunk-signature=sig]\r\n <data> \r\n  ...  0[;chunk-signature=sig]\r\n
///     [trailer-name:value\r\n ...] [x-amz-trailer-signature:sig\r\n] \r\n
/// Each chunk signature chains from the previous one, starting at the request's header signature (the seed);
/// the trailer signature chains from the final chunk's.
///
/// Memory is bounded whatever the body size: chunk data is streamed to the caller and hashed incrementally;
/// only one chunk-size line (at most `max_chunk_line` bytes) or the trailer section (at most
/// `max_trailer_section` bytes) is buffered.

#include "auth/sigv4.hpp"
#include "common/hash.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace depot::auth {

/// What chunk and trailer signatures are computed from.
struct chunk_signing
{
    std::string signing_key;    ///< raw 32 bytes: signing_key(secret, scope)
    std::string amz_date;       ///< the request's "20130524T000000Z"
    std::string scope;          ///< scope_string(scope): "20130524/us-east-1/s3/aws4_request"
    std::string seed_signature; ///< the request's signature (lower-case hex)
};

/// Signature of one chunk: HMAC over
/// "AWS4-HMAC-SHA256-PAYLOAD\n<amz_date>\n<scope>\n<previous>\n<sha256("")>\n <chunk_sha256_hex>". Lower-case
/// hex.
std::string chunk_signature(const chunk_signing& signing, std::string_view previous_signature,
                            std::string_view chunk_sha256_hex);

/// Signature of the trailer section: HMAC over "AWS4-HMAC-SHA256-TRAILER\n<amz_date>\n<scope>\n<previous>\n
/// <hex sha256 of the trailers, each "name:value\n">". `trailers` are (lower-case name, trimmed value) in the
/// order sent, without x-amz-trailer-signature. Lower-case hex.
std::string trailer_signature(const chunk_signing& signing, std::string_view previous_signature,
                              std::span<const std::pair<std::string, std::string>> trailers);

/// Decoder configuration.
struct aws_chunked_options
{
    /// streaming_signed, streaming_signed_trailer or streaming_unsigned_trailer.
    payload_mode mode = payload_mode::streaming_signed;
    /// Required by the signed modes, ignored by streaming_unsigned_trailer.
    chunk_signing signing;
    /// Lower-case trailer names announced in x-amz-trailer; exactly these must arrive (trailer modes only).
    std::vector<std::string> declared_trailers;
    /// x-amz-decoded-content-length, if known: the decoded payload must have exactly this length.
    std::optional<std::uint64_t> decoded_length;
};

/// Longest accepted chunk-size line, CRLF included.
inline constexpr std::size_t max_chunk_line = 1024;
/// Largest accepted trailer section (all trailer lines and the final CRLF).
inline constexpr std::size_t max_trailer_section = 4096;

/// Push-style aws-chunked decoder for one request body. Not thread-safe; one per request.
///
/// Decoded bytes are handed to the sink as they arrive, before the chunk that contains them is verified:
/// they are provisional until `finish()` succeeds, and a caller must not publish them before that.
class aws_chunked_decoder
{
public:
    /// Receives decoded payload bytes; the span is valid only during the call. If the sink throws, the
    /// exception propagates and the decoder must be discarded.
    using sink = std::function<void(std::span<const std::byte>)>;

    /// Throws std::invalid_argument if `options.mode` is not a streaming mode.
    explicit aws_chunked_decoder(aws_chunked_options options);

    /// Consumes the next bytes of the framed body, in any split. Errors (sticky: every later call returns
    /// the same one):
    /// - invalid_argument: bad framing (size line syntax or length, missing CRLF, a chunk-signature in
    ///   unsigned mode or none in a signed mode), more data than `decoded_length`, bytes after the end, or
    ///   a trailer that is undeclared, repeated, missing or oversized;
    /// - signature_does_not_match: a chunk or trailer signature is wrong.
    result<void> feed(std::span<const std::byte> in, const sink& out);
    /// Convenience overload for text.
    result<void> feed(std::string_view in, const sink& out)
    {
        return feed(std::as_bytes(std::span(in.data(), in.size())), out);
    }

    /// Declares the end of the body. incomplete_body if the final chunk (and trailer section) did not
    /// arrive or the decoded length differs from `decoded_length`; otherwise the sticky error, if any.
    result<void> finish();

    /// True once the final chunk and trailer section were decoded and verified.
    bool done() const noexcept { return state_ == state::done; }
    /// Decoded payload bytes emitted so far.
    std::uint64_t decoded_length() const noexcept { return decoded_; }
    /// Trailers received, (lower-case name, trimmed value) in order; complete once `done()`.
    const std::vector<std::pair<std::string, std::string>>& trailers() const noexcept { return trailers_; }
    /// The value of one trailer (name in lower case), if received.
    std::optional<std::string_view> trailer(std::string_view name) const noexcept;

private:
    enum class state
    {
        size_line,
        data,
        data_cr,
        data_lf,
        final_line,
        trailer_line,
        done,
        failed
    };

    result<void> fail(error e);
    result<void> on_size_line(std::string_view line);
    result<void> on_chunk_end();
    result<void> on_trailer_line(std::string_view line);
    result<void> on_trailers_end();
    bool is_signed() const noexcept { return options_.mode != payload_mode::streaming_unsigned_trailer; }

    aws_chunked_options options_;
    state state_ = state::size_line;
    std::string line_;              ///< the partial line being accumulated
    std::size_t trailer_bytes_ = 0; ///< bytes of the trailer section seen so far
    std::uint64_t remaining_ = 0;   ///< data bytes left in the current chunk
    std::uint64_t decoded_ = 0;
    bool final_chunk_ = false;
    std::string chunk_sig_;    ///< signature announced for the current chunk
    std::string previous_sig_; ///< the chain: seed, then each verified chunk signature
    hasher chunk_hash_{digest_kind::sha256};
    std::vector<std::pair<std::string, std::string>> trailers_;
    std::optional<std::string> trailer_sig_;
    std::optional<error> error_;
};

/// Builds the decoder for a parsed and verified streaming request: the mode and seed come from `auth`, the
/// signing key from `secret`, the declared trailers from x-amz-trailer (comma-separated) and the length from
/// x-amz-decoded-content-length. Errors: invalid_argument when `auth.mode` is not a streaming mode, when
/// x-amz-decoded-content-length is not a number, or when x-amz-trailer is sent without a trailer mode.
result<aws_chunked_decoder> make_aws_chunked_decoder(const parsed_auth& auth, const request_view& req,
                                                     std::string_view secret);

} // namespace depot::auth
