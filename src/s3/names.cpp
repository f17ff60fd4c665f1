#include "s3/names.hpp"

#include "s3/header_values.hpp"
#include "s3/utf8.hpp"

#include <array>
#include <vector>

namespace depot::s3 {

namespace {

error bad_bucket(std::string message)
{
    return make_error(errc::invalid_bucket_name, std::move(message));
}

bool is_lower_alnum(char c) noexcept
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/// Four dot-separated groups of digits, like "192.168.5.4".
bool looks_like_ipv4(std::string_view name) noexcept
{
    int groups = 1;
    bool digits_in_group = false;
    for (char c : name) {
        if (c == '.') {
            if (!digits_in_group)
                return false;
            ++groups;
            digits_in_group = false;
        } else if (c >= '0' && c <= '9') {
            digits_in_group = true;
        } else {
            return false;
        }
    }
    return groups == 4 && digits_in_group;
}

} // namespace

result<void> validate_bucket_name(std::string_view name)
{
    if (name.size() < 3 || name.size() > 63)
        return bad_bucket("Bucket name must be between 3 and 63 characters long");
    for (char c : name)
        if (!is_lower_alnum(c) && c != '.' && c != '-')
            return bad_bucket(
                "Bucket name can consist only of lowercase letters, numbers, periods and hyphens");
    if (!is_lower_alnum(name.front()) || !is_lower_alnum(name.back()))
        return bad_bucket("Bucket name must begin and end with a letter or number");
    if (name.find("..") != std::string_view::npos)
        return bad_bucket("Bucket name must not contain two adjacent periods");
    if (looks_like_ipv4(name))
        return bad_bucket("Bucket name must not be formatted as an IP address");
    constexpr std::array<std::string_view, 3> reserved_prefixes = {"xn--", "sthree-", "amzn-s3-demo-"};
    for (auto p : reserved_prefixes)
        if (name.starts_with(p))
            return bad_bucket("Bucket name must not start with the reserved prefix '" + std::string(p) + "'");
    constexpr std::array<std::string_view, 5> reserved_suffixes = {"-s3alias", "--ol-s3", ".mrap", "--x-s3",
                                                                   "--table-s3"};
    for (auto s : reserved_suffixes)
        if (name.ends_with(s))
            return bad_bucket("Bucket name must not end with the reserved suffix '" + std::string(s) + "'");
    return ok();
}

result<void> validate_object_key(std::string_view key)
{
    if (key.size() > max_key_bytes)
        return make_error(errc::key_too_long);
    if (key.empty())
        return make_error(errc::invalid_object_name, "Object key must not be empty");
    if (key.find('\0') != std::string_view::npos)
        return make_error(errc::invalid_object_name, "Object key must not contain NUL");
    if (!is_valid_utf8(key))
        return make_error(errc::invalid_object_name, "Object key must be valid UTF-8");
    return ok();
}

std::string prefix_successor(std::string_view prefix)
{
    // Code point start offsets of the longest well-formed leading part.
    std::vector<std::size_t> starts;
    std::vector<char32_t> points;
    std::size_t pos = 0;
    while (pos < prefix.size()) {
        const std::size_t start = pos;
        const auto cp = decode_utf8(prefix, pos);
        if (!cp)
            break;
        starts.push_back(start);
        points.push_back(*cp);
    }
    // UTF-8 byte order is code point order, so incrementing the last code point that can be incremented
    // gives the smallest string above everything the prefix starts.
    for (std::size_t i = points.size(); i-- > 0;) {
        if (points[i] == 0x10FFFF)
            continue;
        const char32_t next = points[i] == 0xD7FF ? 0xE000 : points[i] + 1;
        std::string out(prefix.substr(0, starts[i]));
        append_utf8(out, next);
        return out;
    }
    return {};
}

result<void> validate_user_metadata(std::span<const std::pair<std::string, std::string>> metadata)
{
    std::size_t total = 0;
    for (const auto& [name, value] : metadata) {
        // Names and values become response headers (x-amz-meta-NAME: VALUE) on every later read.
        if (!is_token(name))
            return make_error(errc::invalid_argument,
                              "The metadata name '" + std::string(name) +
                                  "' is not a valid HTTP header name (letters, digits and !#$%&'*+-.^_`|~)",
                              "x-amz-meta-");
        if (!is_field_value(value))
            return make_error(errc::invalid_argument,
                              "The value of metadata '" + std::string(name) +
                                  "' contains a control character or is not valid UTF-8",
                              "x-amz-meta-" + std::string(name));
        total += name.size() + value.size();
    }
    if (total > max_user_metadata_bytes)
        return make_error(errc::metadata_too_large,
                          "Your metadata headers exceed the maximum allowed metadata size.");
    return ok();
}

} // namespace depot::s3
