#include "common/json.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <cstdint>
#include <set>
#include <vector>

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

namespace {

/// A Boost.JSON basic_parser handler that builds nothing: it keeps the member names seen so far in each
/// open object and stops at the first one named twice (Boost.JSON 1.81's value parser keeps the last).
struct duplicate_key_finder
{
    static constexpr std::size_t max_object_size = std::size_t(-1);
    static constexpr std::size_t max_array_size = std::size_t(-1);
    static constexpr std::size_t max_key_size = std::size_t(-1);
    static constexpr std::size_t max_string_size = std::size_t(-1);

    std::vector<std::set<std::string, std::less<>>> open; ///< the member names of each open object
    std::string key;                                      ///< the key being read (it may come in parts)
    std::optional<std::string> duplicate;

    bool on_document_begin(boost::system::error_code&) { return true; }
    bool on_document_end(boost::system::error_code&) { return true; }
    bool on_array_begin(boost::system::error_code&) { return true; }
    bool on_array_end(std::size_t, boost::system::error_code&) { return true; }
    bool on_object_begin(boost::system::error_code&)
    {
        open.emplace_back();
        return true;
    }
    bool on_object_end(std::size_t, boost::system::error_code&)
    {
        open.pop_back();
        return true;
    }
    bool on_string_part(boost::json::string_view, std::size_t, boost::system::error_code&) { return true; }
    bool on_string(boost::json::string_view, std::size_t, boost::system::error_code&) { return true; }
    bool on_key_part(boost::json::string_view s, std::size_t, boost::system::error_code&)
    {
        key.append(s.data(), s.size());
        return true;
    }
    bool on_key(boost::json::string_view s, std::size_t, boost::system::error_code& ec)
    {
        key.append(s.data(), s.size());
        if (!open.back().insert(key).second) {
            duplicate = std::move(key);
            ec = boost::json::error::syntax; // stops the parser; `duplicate` says why
            return false;
        }
        key.clear();
        return true;
    }
    bool on_number_part(boost::json::string_view, boost::system::error_code&) { return true; }
    bool on_int64(std::int64_t, boost::json::string_view, boost::system::error_code&) { return true; }
    bool on_uint64(std::uint64_t, boost::json::string_view, boost::system::error_code&) { return true; }
    bool on_double(double, boost::json::string_view, boost::system::error_code&) { return true; }
    bool on_bool(bool, boost::system::error_code&) { return true; }
    bool on_null(boost::system::error_code&) { return true; }
    bool on_comment_part(boost::json::string_view, boost::system::error_code&) { return true; }
    bool on_comment(boost::json::string_view, boost::system::error_code&) { return true; }
};

} // namespace

std::optional<std::string> duplicate_member(std::string_view text)
{
    try {
        boost::json::basic_parser<duplicate_key_finder> finder(boost::json::parse_options{});
        boost::system::error_code ec;
        finder.write_some(false, text.data(), text.size(), ec);
        return finder.handler().duplicate;
    } catch (...) { // allocation failure: the caller's own parse fails the same way
        return std::nullopt;
    }
}

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
