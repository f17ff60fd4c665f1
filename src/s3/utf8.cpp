#include "s3/utf8.hpp"

#include <cassert>

namespace depot::s3 {

namespace {

bool is_continuation(unsigned char c) noexcept
{
    return (c & 0xC0) == 0x80;
}

} // namespace

std::optional<char32_t> decode_utf8(std::string_view text, std::size_t& pos) noexcept
{
    assert(pos < text.size());
    const auto lead = static_cast<unsigned char>(text[pos]);
    if (lead < 0x80) {
        ++pos;
        return lead;
    }
    std::size_t length = 0;
    char32_t cp = 0;
    char32_t min = 0;
    if ((lead & 0xE0) == 0xC0) {
        length = 2;
        cp = lead & 0x1F;
        min = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
        length = 3;
        cp = lead & 0x0F;
        min = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
        length = 4;
        cp = lead & 0x07;
        min = 0x10000;
    } else {
        return std::nullopt; // a stray continuation byte, or 0xF8..0xFF
    }
    if (text.size() - pos < length)
        return std::nullopt;
    for (std::size_t i = 1; i < length; ++i) {
        const auto c = static_cast<unsigned char>(text[pos + i]);
        if (!is_continuation(c))
            return std::nullopt;
        cp = (cp << 6) | (c & 0x3F);
    }
    // Overlong forms, UTF-16 surrogates and values beyond Unicode are not UTF-8.
    if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return std::nullopt;
    pos += length;
    return cp;
}

bool is_valid_utf8(std::string_view text) noexcept
{
    std::size_t pos = 0;
    while (pos < text.size()) {
        // ASCII runs dominate object keys; skip them without the general decoder.
        if (static_cast<unsigned char>(text[pos]) < 0x80) {
            ++pos;
            continue;
        }
        if (!decode_utf8(text, pos))
            return false;
    }
    return true;
}

bool is_storable_text(std::string_view text) noexcept
{
    return text.find('\0') == std::string_view::npos && is_valid_utf8(text);
}

void append_utf8(std::string& out, char32_t cp)
{
    assert(cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF));
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

} // namespace depot::s3
