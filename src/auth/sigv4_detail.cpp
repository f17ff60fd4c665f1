#include "auth/sigv4_detail.hpp"

namespace depot::auth::detail {
namespace {

char lower(char c) noexcept
{
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool is_blank(char c) noexcept
{
    return c == ' ' || c == '\t';
}

} // namespace

bool iequals(std::string_view a, std::string_view b) noexcept
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (lower(a[i]) != lower(b[i]))
            return false;
    }
    return true;
}

std::string to_lower(std::string_view s)
{
    std::string out(s);
    for (auto& c : out)
        c = lower(c);
    return out;
}

std::string_view trim(std::string_view s) noexcept
{
    while (!s.empty() && is_blank(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && is_blank(s.back()))
        s.remove_suffix(1);
    return s;
}

bool is_hex(std::string_view s) noexcept
{
    if (s.empty())
        return false;
    for (char c : s) {
        bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
        if (!hex)
            return false;
    }
    return true;
}

std::pair<std::string_view, std::string_view> split_target(std::string_view raw_target) noexcept
{
    auto q = raw_target.find('?');
    if (q == std::string_view::npos)
        return {raw_target, {}};
    return {raw_target.substr(0, q), raw_target.substr(q + 1)};
}

std::optional<std::string_view> find_header(std::span<const header_view> headers,
                                            std::string_view name) noexcept
{
    for (const auto& h : headers) {
        if (iequals(h.name, name))
            return h.value;
    }
    return std::nullopt;
}

std::size_t count_header(std::span<const header_view> headers, std::string_view name) noexcept
{
    std::size_t n = 0;
    for (const auto& h : headers) {
        if (iequals(h.name, name))
            ++n;
    }
    return n;
}

result<std::size_t> authorization_headers(std::span<const header_view> headers, bool presigned)
{
    const auto count = count_header(headers, "authorization");
    if (count > 0 && presigned)
        return make_error(
            errc::invalid_argument,
            "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature "
            "query string parameter or the Authorization header should be specified",
            "Authorization");
    if (count > 1)
        return make_error(errc::authorization_header_malformed,
                          "The authorization header is malformed; it appears more than once.");
    return count;
}

std::optional<std::pair<std::string, credential_scope>> parse_credential(std::string_view credential)
{
    // Split from the right: the access key id is everything before the last four components.
    std::string_view parts[4];
    std::string_view rest = credential;
    for (int i = 3; i >= 0; --i) {
        auto slash = rest.rfind('/');
        if (slash == std::string_view::npos)
            return std::nullopt;
        parts[i] = rest.substr(slash + 1);
        rest = rest.substr(0, slash);
    }
    const auto& date = parts[0];
    bool date_ok = date.size() == 8;
    for (char c : date)
        date_ok = date_ok && c >= '0' && c <= '9';
    if (rest.empty() || !date_ok || parts[1].empty() || parts[2].empty() || parts[3] != "aws4_request")
        return std::nullopt;
    // The key id is looked up in PostgreSQL and the scope echoed in messages: bytes that are not printable
    // ASCII (invalid UTF-8, NUL, control characters) make the credential malformed, never a query.
    for (char c : credential)
        if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7E)
            return std::nullopt;
    return std::pair{std::string(rest),
                     credential_scope{std::string(date), std::string(parts[1]), std::string(parts[2])}};
}

} // namespace depot::auth::detail
