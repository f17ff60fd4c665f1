#include "common/json.hpp"

#include <cstdint>

namespace depot {

std::optional<boost::json::value> json_parse(std::string_view text) noexcept
{
    try {
        boost::system::error_code ec;
        auto v = boost::json::parse(text, ec);
        if (ec)
            return std::nullopt;
        return v;
    } catch (...) { // allocation failure
        return std::nullopt;
    }
}

namespace {

/// Length of the well-formed UTF-8 sequence starting at s[i], or 0 (no overlong forms, no surrogates,
/// nothing above U+10FFFF).
std::size_t sequence_length(std::string_view s, std::size_t i) noexcept
{
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    if (c < 0x80)
        return 1;
    const auto rest = s.size() - i;
    const auto cont = [&](std::size_t k) { return (b(k) & 0xC0) == 0x80; };
    if (c >= 0xC2 && c <= 0xDF)
        return rest >= 2 && cont(i + 1) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (rest < 3 || !cont(i + 1) || !cont(i + 2))
            return 0;
        if (c == 0xE0 && b(i + 1) < 0xA0)
            return 0; // overlong
        if (c == 0xED && b(i + 1) >= 0xA0)
            return 0; // surrogate
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (rest < 4 || !cont(i + 1) || !cont(i + 2) || !cont(i + 3))
            return 0;
        if (c == 0xF0 && b(i + 1) < 0x90)
            return 0; // overlong
        if (c == 0xF4 && b(i + 1) >= 0x90)
            return 0; // above U+10FFFF
        return 4;
    }
    return 0;
}

} // namespace

std::string utf8_lossy(std::string_view s)
{
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        if (const auto n = sequence_length(s, i); n != 0) {
            out.append(s.substr(i, n));
            i += n;
        } else {
            out.append("\xEF\xBF\xBD");
            ++i;
        }
    }
    return out;
}

std::string json_quote(std::string_view s)
{
    return boost::json::serialize(boost::json::string_view(utf8_lossy(s)));
}

boost::json::value json_string(std::string_view s)
{
    return boost::json::value(utf8_lossy(s));
}

} // namespace depot
