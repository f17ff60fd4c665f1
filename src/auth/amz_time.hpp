#pragma once
/// \file
/// The two timestamp formats SigV4 meets: ISO 8601 basic ("20130524T000000Z", x-amz-date and X-Amz-Date)
/// and the HTTP Date header (RFC 7231 section 7.1.1.1). All times are UTC; leap seconds are rejected.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace depot::auth {

/// Parses "YYYYMMDDTHHMMSSZ" exactly (16 characters); nullopt on any other shape or an impossible date.
std::optional<std::chrono::system_clock::time_point> parse_amz_date(std::string_view text);

/// Formats a time as "YYYYMMDDTHHMMSSZ", truncating sub-second precision.
std::string format_amz_date(std::chrono::system_clock::time_point t);

/// Parses an HTTP date in any of the three forms a recipient must accept: IMF-fixdate
/// ("Fri, 24 May 2013 00:00:00 GMT"), the obsolete RFC 850 form ("Friday, 24-May-13 00:00:00 GMT") and
/// asctime ("Fri May 24 00:00:00 2013"). Leading and trailing spaces are ignored; nullopt otherwise.
std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view text);

} // namespace depot::auth
