#include "auth/aws_chunked.hpp"

#include "auth/sigv4_detail.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <stdexcept>

namespace depot::auth {
namespace {

error framing(std::string message)
{
    return make_error(errc::invalid_argument, std::move(message));
}

std::string string_to_sign_prefix(std::string_view kind, const chunk_signing& signing,
                                  std::string_view previous_signature)
{
    std::string sts(kind);
    sts.push_back('\n');
    sts += signing.amz_date;
    sts.push_back('\n');
    sts += signing.scope;
    sts.push_back('\n');
    sts += previous_signature;
    sts.push_back('\n');
    return sts;
}

bool is_streaming(payload_mode mode) noexcept
{
    return mode == payload_mode::streaming_signed || mode == payload_mode::streaming_signed_trailer ||
           mode == payload_mode::streaming_unsigned_trailer;
}

std::uint64_t parse_hex(std::string_view hex) noexcept
{
    std::uint64_t v = 0;
    for (char c : hex) {
        int d = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
        v = (v << 4) | static_cast<std::uint64_t>(d);
    }
    return v;
}

} // namespace

std::string chunk_signature(const chunk_signing& signing, std::string_view previous_signature,
                            std::string_view chunk_sha256_hex)
{
    auto sts = string_to_sign_prefix("AWS4-HMAC-SHA256-PAYLOAD", signing, previous_signature);
    sts += empty_payload_hash;
    sts.push_back('\n');
    sts += chunk_sha256_hex;
    return signature(signing.signing_key, sts);
}

std::string trailer_signature(const chunk_signing& signing, std::string_view previous_signature,
                              std::span<const std::pair<std::string, std::string>> trailers)
{
    hasher h(digest_kind::sha256);
    for (const auto& [name, value] : trailers) {
        h.update(name);
        h.update(":");
        h.update(value);
        h.update("\n");
    }
    auto sts = string_to_sign_prefix("AWS4-HMAC-SHA256-TRAILER", signing, previous_signature);
    sts += to_hex(h.finish());
    return signature(signing.signing_key, sts);
}

aws_chunked_decoder::aws_chunked_decoder(aws_chunked_options options) : options_(std::move(options))
{
    if (!is_streaming(options_.mode))
        throw std::invalid_argument("aws_chunked_decoder: not a streaming payload mode");
    previous_sig_ = detail::to_lower(options_.signing.seed_signature);
}

std::optional<std::string_view> aws_chunked_decoder::trailer(std::string_view name) const noexcept
{
    for (const auto& [n, v] : trailers_) {
        if (n == name)
            return std::string_view(v);
    }
    return std::nullopt;
}

result<void> aws_chunked_decoder::fail(error e)
{
    state_ = state::failed;
    error_ = e;
    return e;
}

result<void> aws_chunked_decoder::feed(std::span<const std::byte> in, const sink& out)
{
    if (error_)
        return *error_;
    std::string_view text(reinterpret_cast<const char*>(in.data()), in.size());
    std::size_t pos = 0;
    while (pos < text.size()) {
        switch (state_) {
        case state::size_line:
        case state::final_line:
        case state::trailer_line: {
            auto nl = text.find('\n', pos);
            auto piece =
                text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos + 1);
            bool trailer = state_ == state::trailer_line;
            if (trailer ? trailer_bytes_ + piece.size() > max_trailer_section
                        : line_.size() + piece.size() > max_chunk_line)
                return fail(framing(trailer ? "The aws-chunked trailer section is too large"
                                            : "An aws-chunked chunk-size line is too long"));
            line_ += piece;
            pos += piece.size();
            if (trailer)
                trailer_bytes_ += piece.size();
            if (nl == std::string_view::npos)
                break;
            if (line_.size() < 2 || line_[line_.size() - 2] != '\r')
                return fail(framing("aws-chunked lines must end with CRLF"));
            std::string_view line(line_.data(), line_.size() - 2);
            result<void> r = ok();
            if (state_ == state::size_line)
                r = on_size_line(line);
            else if (state_ == state::trailer_line)
                r = on_trailer_line(line);
            else if (!line.empty())
                r = fail(framing("Expected the end of the aws-chunked body after the final chunk"));
            else
                state_ = state::done;
            line_.clear();
            if (!r)
                return r;
            break;
        }
        case state::data: {
            auto n = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, text.size() - pos));
            auto data = in.subspan(pos, n);
            if (is_signed())
                chunk_hash_.update(data);
            out(data);
            remaining_ -= n;
            decoded_ += n;
            pos += n;
            if (remaining_ == 0) {
                if (auto r = on_chunk_end(); !r)
                    return r;
            }
            break;
        }
        case state::data_cr:
        case state::data_lf: {
            char expected = state_ == state::data_cr ? '\r' : '\n';
            if (text[pos] != expected)
                return fail(framing("aws-chunked chunk data must be followed by CRLF"));
            ++pos;
            state_ = state_ == state::data_cr ? state::data_lf : state::size_line;
            break;
        }
        case state::done:
            return fail(framing("Unexpected data after the end of the aws-chunked body"));
        case state::failed:
            return *error_;
        }
    }
    return ok();
}

result<void> aws_chunked_decoder::on_size_line(std::string_view line)
{
    auto semi = line.find(';');
    auto hex = line.substr(0, semi);
    if (hex.size() > 16 || !detail::is_hex(hex))
        return fail(framing("Invalid aws-chunked chunk size '" + std::string(hex.substr(0, 32)) + "'"));
    auto size = parse_hex(hex);
    if (is_signed()) {
        constexpr std::string_view prefix = "chunk-signature=";
        auto ext = semi == std::string_view::npos ? std::string_view{} : line.substr(semi + 1);
        if (!ext.starts_with(prefix))
            return fail(framing("Every aws-chunked chunk must carry a chunk-signature"));
        auto sig = ext.substr(prefix.size());
        if (sig.size() != 64 || !detail::is_hex(sig))
            return fail(framing("A chunk-signature must be 64 hexadecimal characters"));
        chunk_sig_ = detail::to_lower(sig);
    } else if (semi != std::string_view::npos) {
        return fail(framing("Unexpected chunk extension in an unsigned aws-chunked body"));
    }
    if (size > std::numeric_limits<std::uint64_t>::max() - decoded_ ||
        (options_.decoded_length && decoded_ + size > *options_.decoded_length))
        return fail(framing("The aws-chunked body holds more data than x-amz-decoded-content-length"));

    if (size > 0) {
        remaining_ = size;
        state_ = state::data;
        return ok();
    }
    final_chunk_ = true;
    if (auto r = on_chunk_end(); !r)
        return r;
    state_ = options_.mode == payload_mode::streaming_signed ? state::final_line : state::trailer_line;
    return ok();
}

result<void> aws_chunked_decoder::on_chunk_end()
{
    if (is_signed()) {
        auto expected = chunk_signature(options_.signing, previous_sig_, to_hex(chunk_hash_.finish()));
        chunk_hash_.reset();
        if (!constant_time_equal(expected, chunk_sig_))
            return fail(
                make_error(errc::signature_does_not_match,
                           "The chunk signature we calculated does not match the signature you provided."));
        previous_sig_ = chunk_sig_;
    }
    state_ = state::data_cr;
    return ok();
}

result<void> aws_chunked_decoder::on_trailer_line(std::string_view line)
{
    if (line.empty())
        return on_trailers_end();
    if (trailer_sig_)
        return fail(framing("x-amz-trailer-signature must be the last trailer"));
    auto colon = line.find(':');
    auto name = detail::to_lower(detail::trim(line.substr(0, colon)));
    if (colon == std::string_view::npos || name.empty())
        return fail(framing("Malformed aws-chunked trailer line"));
    auto value = detail::trim(line.substr(colon + 1));
    if (name == "x-amz-trailer-signature") {
        if (!is_signed())
            return fail(framing("x-amz-trailer-signature in an unsigned aws-chunked body"));
        if (value.size() != 64 || !detail::is_hex(value))
            return fail(framing("x-amz-trailer-signature must be 64 hexadecimal characters"));
        trailer_sig_ = detail::to_lower(value);
        return ok();
    }
    const auto& declared = options_.declared_trailers;
    if (std::find(declared.begin(), declared.end(), name) == declared.end())
        return fail(framing("The trailer '" + name + "' was not declared in x-amz-trailer"));
    if (trailer(name))
        return fail(framing("The trailer '" + name + "' appears more than once"));
    trailers_.emplace_back(std::move(name), std::string(value));
    return ok();
}

result<void> aws_chunked_decoder::on_trailers_end()
{
    for (const auto& name : options_.declared_trailers) {
        if (!trailer(name))
            return fail(framing("The trailer '" + name + "' declared in x-amz-trailer is missing"));
    }
    if (is_signed()) {
        if (!trailer_sig_)
            return fail(framing("The aws-chunked trailer section lacks x-amz-trailer-signature"));
        auto expected = trailer_signature(options_.signing, previous_sig_, trailers_);
        if (!constant_time_equal(expected, *trailer_sig_))
            return fail(
                make_error(errc::signature_does_not_match,
                           "The trailer signature we calculated does not match the signature you provided."));
    }
    state_ = state::done;
    return ok();
}

result<void> aws_chunked_decoder::finish()
{
    if (error_)
        return *error_;
    if (state_ != state::done)
        return fail(
            make_error(errc::incomplete_body, "The request body ended before the final aws-chunked chunk"));
    if (options_.decoded_length && decoded_ != *options_.decoded_length)
        return fail(
            make_error(errc::incomplete_body,
                       "You did not provide the number of bytes specified by x-amz-decoded-content-length"));
    return ok();
}

result<aws_chunked_decoder> make_aws_chunked_decoder(const parsed_auth& auth, const request_view& req,
                                                     std::string_view secret)
{
    if (!is_streaming(auth.mode))
        return make_error(errc::invalid_argument, "The request does not carry an aws-chunked payload",
                          "x-amz-content-sha256");
    aws_chunked_options options;
    options.mode = auth.mode;
    if (auth.mode != payload_mode::streaming_unsigned_trailer) {
        options.signing = chunk_signing{signing_key(secret, auth.scope), auth.amz_date,
                                        scope_string(auth.scope), auth.signature};
    }
    if (auto length = detail::find_header(req.headers, "x-amz-decoded-content-length")) {
        auto text = detail::trim(*length);
        std::uint64_t n = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
        if (text.empty() || ec != std::errc{} || end != text.data() + text.size())
            return make_error(errc::invalid_argument,
                              "x-amz-decoded-content-length must be a number of bytes",
                              "x-amz-decoded-content-length");
        options.decoded_length = n;
    }
    for (const auto& h : req.headers) {
        if (!detail::iequals(h.name, "x-amz-trailer"))
            continue;
        if (auth.mode == payload_mode::streaming_signed)
            return make_error(errc::invalid_argument,
                              "x-amz-trailer requires a trailer payload mode in x-amz-content-sha256",
                              "x-amz-trailer");
        std::string_view list = h.value;
        while (!list.empty()) {
            auto comma = list.find(',');
            auto name = detail::to_lower(detail::trim(list.substr(0, comma)));
            if (!name.empty() && std::find(options.declared_trailers.begin(), options.declared_trailers.end(),
                                           name) == options.declared_trailers.end())
                options.declared_trailers.push_back(std::move(name));
            list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        }
    }
    return aws_chunked_decoder(std::move(options));
}

} // namespace depot::auth
