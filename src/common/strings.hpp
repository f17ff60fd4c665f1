#pragma once
/// \file
/// Small ASCII string helpers shared by the request parsers.

#include <algorithm>
#include <cctype>
#include <string_view>

namespace depot {

/// `s` without leading and trailing spaces and tabs (HTTP's optional whitespace).
inline std::string_view trim_ows(std::string_view s) noexcept
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

/// ASCII case-insensitive equality.
inline bool iequals_ascii(std::string_view a, std::string_view b) noexcept
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

} // namespace depot
