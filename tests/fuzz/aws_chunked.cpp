/// \file
/// Fuzzes the aws-chunked decoder (src/auth/aws_chunked.cpp), trailers included.
///
/// The first input byte picks what the rest is:
/// - raw (bit 7 clear): the rest is a body fed in pieces to a decoder of the mode in bits 0-1, with
///   x-amz-decoded-content-length when bit 2 is set (from the next two bytes) and the piece size from the
///   next byte. Invariants: the decoder never outputs more bytes than it was fed, its count equals what
///   reached the sink, it never passes the declared length, and a finished body has every declared trailer.
/// - round trip (bit 7 set): the rest is cut into chunks that are framed and signed as a client would
///   (with trailers in the trailer modes), then decoded in pieces; the decoder must accept it and output
///   exactly the chunks' bytes. With bit 6 set one byte of the framed body is changed first and only the
///   raw invariants hold.

#include "auth/aws_chunked.hpp"

#include "check.hpp"
#include "common/hash.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace depot;
using namespace depot::auth;

/// Reads bytes from the front of the input; zeros once it is exhausted.
struct reader
{
    std::string_view in;
    std::uint8_t byte()
    {
        if (in.empty())
            return 0;
        auto b = static_cast<std::uint8_t>(in.front());
        in.remove_prefix(1);
        return b;
    }
    std::string_view take(std::size_t n)
    {
        auto out = in.substr(0, n);
        in.remove_prefix(out.size());
        return out;
    }
};

const chunk_signing& signing()
{
    static const chunk_signing s{
        signing_key("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", {"20130524", "us-east-1", "s3"}),
        "20130524T000000Z", "20130524/us-east-1/s3/aws4_request",
        "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"};
    return s;
}

constexpr payload_mode modes[] = {payload_mode::streaming_signed, payload_mode::streaming_signed_trailer,
                                  payload_mode::streaming_unsigned_trailer,
                                  payload_mode::streaming_unsigned_trailer};

const std::vector<std::string> declared = {"x-amz-checksum-crc32", "x-amz-meta-note"};

aws_chunked_options options_for(payload_mode mode, std::optional<std::uint64_t> length)
{
    aws_chunked_options o{
        .mode = mode, .signing = signing(), .declared_trailers = {}, .decoded_length = length};
    if (mode != payload_mode::streaming_signed)
        o.declared_trailers = declared;
    return o;
}

/// Feeds `body` in pieces of `piece` bytes, checking the raw invariants; returns the output and whether
/// feed and finish both succeeded.
std::pair<bool, std::string> decode(const aws_chunked_options& options, std::string_view body,
                                    std::size_t piece)
{
    aws_chunked_decoder d(options);
    std::string out;
    std::uint64_t fed = 0;
    auto sink = [&](std::span<const std::byte> b) {
        out.append(reinterpret_cast<const char*>(b.data()), b.size());
    };
    bool good = true;
    while (!body.empty() && good) {
        auto part = body.substr(0, piece);
        body.remove_prefix(part.size());
        fed += part.size();
        good = static_cast<bool>(d.feed(part, sink));
        FUZZ_CHECK(out.size() == d.decoded_length());
        FUZZ_CHECK(out.size() <= fed);
        if (options.decoded_length)
            FUZZ_CHECK(out.size() <= *options.decoded_length);
    }
    good = static_cast<bool>(d.finish()) && good;
    if (good) {
        FUZZ_CHECK(d.done());
        for (const auto& name : options.declared_trailers)
            FUZZ_CHECK(d.trailer(name).has_value());
        if (options.decoded_length)
            FUZZ_CHECK(out.size() == *options.decoded_length);
    }
    return {good, out};
}

std::string frame(const std::vector<std::string_view>& chunks, payload_mode mode, std::string_view note)
{
    const bool is_signed = mode != payload_mode::streaming_unsigned_trailer;
    std::string out;
    std::string prev = signing().seed_signature;
    auto add = [&](std::string_view data) {
        char size[32];
        std::snprintf(size, sizeof size, "%zx", data.size());
        out += size;
        if (is_signed) {
            prev = chunk_signature(signing(), prev, to_hex(sha256(data)));
            out += ";chunk-signature=" + prev;
        }
        out += "\r\n";
        if (!data.empty()) {
            out += data;
            out += "\r\n";
        }
    };
    for (auto c : chunks)
        add(c);
    add("");
    if (mode != payload_mode::streaming_signed) {
        const std::vector<std::pair<std::string, std::string>> trailers = {
            {"x-amz-checksum-crc32", "sOO8/Q=="}, {"x-amz-meta-note", std::string(note)}};
        for (const auto& [name, value] : trailers)
            out += name + ":" + value + "\r\n";
        if (is_signed)
            out += "x-amz-trailer-signature:" + trailer_signature(signing(), prev, trailers) + "\r\n";
    }
    out += "\r\n";
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    reader r{std::string_view(reinterpret_cast<const char*>(data), size)};
    const auto control = r.byte();
    const auto mode = modes[control & 3];
    if (!(control & 0x80)) {
        std::optional<std::uint64_t> length;
        if (control & 4)
            length = std::uint64_t(r.byte()) << 8 | r.byte();
        const std::size_t piece = r.byte() + 1u;
        decode(options_for(mode, length), r.in, piece);
        return 0;
    }
    // A trailer value without the characters that would end or reshape its line.
    std::string note(r.take(r.byte() % 16));
    for (auto& c : note)
        if (c == '\r' || c == '\n' || c == ' ' || c == '\t')
            c = '_';
    const std::size_t piece = r.byte() + 1u;
    const bool mutate = control & 0x40;
    const std::size_t mutate_at = std::size_t(r.byte()) << 8 | r.byte();
    const std::uint8_t mutate_xor = r.byte() | 1;
    std::vector<std::string_view> chunks;
    std::string payload;
    while (!r.in.empty()) {
        auto c = r.take(r.byte() + 1u);
        if (c.empty()) // a length byte with no data after it: an empty chunk would be the final one
            break;
        chunks.push_back(c);
        payload += c;
    }
    auto body = frame(chunks, mode, note);
    if (!mutate) {
        auto [good, out] = decode(options_for(mode, payload.size()), body, piece);
        FUZZ_CHECK(good);
        FUZZ_CHECK(out == payload);
        return 0;
    }
    body[mutate_at % body.size()] ^= static_cast<char>(mutate_xor);
    decode(options_for(mode, std::nullopt), body, piece);
    return 0;
}
