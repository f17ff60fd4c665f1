#include "common/uri.hpp"

namespace depot {
namespace {

bool unreserved(unsigned char c) noexcept
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~';
}

int hex_digit(char c) noexcept
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

} // namespace

std::string uri_encode(std::string_view in, bool keep_slash)
{
    static constexpr char digits[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(in.size() + in.size() / 4);
    for (unsigned char c : in) {
        if (unreserved(c) || (keep_slash && c == '/')) {
            out.push_back(static_cast<char>(c));
        } else {
            out.push_back('%');
            out.push_back(digits[c >> 4]);
            out.push_back(digits[c & 0xf]);
        }
    }
    return out;
}

std::optional<std::string> uri_decode(std::string_view in, bool plus_is_space)
{
    std::string out;
    out.reserve(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
        char c = in[i];
        if (c == '%') {
            if (i + 2 >= in.size())
                return std::nullopt;
            int hi = hex_digit(in[i + 1]);
            int lo = hex_digit(in[i + 2]);
            if (hi < 0 || lo < 0)
                return std::nullopt;
            out.push_back(static_cast<char>((hi << 4) | lo));
            i += 2;
        } else if (c == '+' && plus_is_space) {
            out.push_back(' ');
        } else {
            out.push_back(c);
        }
    }
    return out;
}

std::optional<std::vector<std::pair<std::string, std::string>>> parse_query(std::string_view raw)
{
    std::vector<std::pair<std::string, std::string>> out;
    while (!raw.empty()) {
        auto amp = raw.find('&');
        auto part = raw.substr(0, amp);
        raw = amp == std::string_view::npos ? std::string_view{} : raw.substr(amp + 1);
        if (part.empty())
            continue;
        auto eq = part.find('=');
        auto name = uri_decode(part.substr(0, eq));
        auto value = uri_decode(eq == std::string_view::npos ? std::string_view{} : part.substr(eq + 1));
        if (!name || !value)
            return std::nullopt;
        out.emplace_back(std::move(*name), std::move(*value));
    }
    return out;
}

} // namespace depot
