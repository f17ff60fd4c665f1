#include "s3/range.hpp"

#include "s3/errors.hpp"

#include <limits>

namespace depot::s3 {

namespace {

constexpr std::uint64_t saturated = std::numeric_limits<std::uint64_t>::max();

std::string_view trim_ows(std::string_view s) noexcept
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

/// A non-empty run of digits; values beyond 2^64-1 saturate (they are past the end of any object).
std::optional<std::uint64_t> parse_digits(std::string_view s) noexcept
{
    if (s.empty())
        return std::nullopt;
    std::uint64_t value = 0;
    for (char c : s) {
        if (c < '0' || c > '9')
            return std::nullopt;
        const auto digit = static_cast<std::uint64_t>(c - '0');
        value = value > (saturated - digit) / 10 ? saturated : value * 10 + digit;
    }
    return value;
}

/// A syntactically valid byte-range-spec or suffix-byte-range-spec, not yet resolved against a size.
struct range_spec
{
    std::optional<std::uint64_t> first; ///< nullopt for a suffix range
    std::optional<std::uint64_t> last;  ///< nullopt for "a-"; the suffix length for "-n"
};

std::optional<range_spec> parse_spec(std::string_view spec)
{
    const auto dash = spec.find('-');
    if (dash == std::string_view::npos)
        return std::nullopt;
    const auto left = spec.substr(0, dash);
    const auto right = spec.substr(dash + 1);
    range_spec out;
    if (left.empty()) {
        out.last = parse_digits(right);
        if (!out.last)
            return std::nullopt;
        return out;
    }
    out.first = parse_digits(left);
    if (!out.first)
        return std::nullopt;
    if (!right.empty()) {
        out.last = parse_digits(right);
        if (!out.last || *out.last < *out.first)
            return std::nullopt;
    }
    return out;
}

/// True when `header` starts with the case-insensitive unit "bytes=", which is then removed.
bool strip_bytes_unit(std::string_view& header) noexcept
{
    constexpr std::string_view unit = "bytes=";
    if (header.size() < unit.size())
        return false;
    for (std::size_t i = 0; i < unit.size(); ++i) {
        char c = header[i];
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
        if (c != unit[i])
            return false;
    }
    header.remove_prefix(unit.size());
    return true;
}

} // namespace

result<std::optional<byte_range>> parse_range(std::string_view header, std::uint64_t size)
{
    const std::optional<byte_range> whole;
    header = trim_ows(header);
    if (header.empty() || !strip_bytes_unit(header))
        return whole;
    // The byte-range-set is a comma-separated list that may contain empty elements; S3 serves a single
    // range and ignores the header (whole object) when several are asked for.
    std::optional<std::string_view> only;
    std::size_t start = 0;
    for (;;) {
        const auto comma = header.find(',', start);
        const auto element =
            trim_ows(header.substr(start, comma == std::string_view::npos ? comma : comma - start));
        if (!element.empty()) {
            if (only)
                return whole;
            only = element;
        }
        if (comma == std::string_view::npos)
            break;
        start = comma + 1;
    }
    if (!only)
        return whole;
    const auto spec = parse_spec(*only);
    if (!spec)
        return whole;
    if (!spec->first) {
        const std::uint64_t suffix = *spec->last;
        if (suffix == 0 || size == 0)
            return make_error(errc::invalid_range);
        return std::optional<byte_range>(
            byte_range{.first = suffix >= size ? 0 : size - suffix, .last = size - 1});
    }
    if (*spec->first >= size)
        return make_error(errc::invalid_range);
    const std::uint64_t last = spec->last && *spec->last < size ? *spec->last : size - 1;
    return std::optional<byte_range>(byte_range{.first = *spec->first, .last = last});
}

result<byte_range> parse_copy_source_range(std::string_view header, std::uint64_t source_size)
{
    std::string_view rest = header;
    std::optional<range_spec> spec;
    if (strip_bytes_unit(rest))
        spec = parse_spec(rest);
    if (!spec || !spec->first || !spec->last)
        return argument_error(
            errc::invalid_argument,
            "The x-amz-copy-source-range value must be of the form bytes=first-last where first "
            "and last are the zero-based offsets of the first and last bytes to copy",
            "x-amz-copy-source-range", header);
    if (*spec->last >= source_size)
        return make_error(errc::invalid_range, "The requested range is not satisfiable");
    return byte_range{.first = *spec->first, .last = *spec->last};
}

std::string content_range(const byte_range& range, std::uint64_t size)
{
    return "bytes " + std::to_string(range.first) + "-" + std::to_string(range.last) + "/" +
           std::to_string(size);
}

std::string unsatisfied_content_range(std::uint64_t size)
{
    return "bytes */" + std::to_string(size);
}

} // namespace depot::s3
