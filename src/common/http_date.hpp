#pragma once
/// \file
/// The timestamp formats of the S3 wire: HTTP dates (RFC 7231 section 7.1.1.1) in Last-Modified, Date and
/// the conditional headers; ISO 8601 with milliseconds in XML bodies; the ISO 8601 basic form of
/// x-amz-date. Pure calendar arithmetic in UTC: no locale, no TZ environment, no timegm. Parsed dates
/// outside what `time_point` can hold (about 1678..2261) are clamped to its range.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace depot {

using time_point = std::chrono::system_clock::time_point;

/// IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT"; sub-second precision is truncated.
std::string format_http_date(time_point t);

/// Parses the three HTTP date forms a recipient must accept: IMF-fixdate, RFC 850
/// ("Sunday, 06-Nov-94 08:49:37 GMT"; two-digit years 70..99 are 19xx, 00..69 are 20xx) and asctime
/// ("Sun Nov  6 08:49:37 1994"). Surrounding whitespace is ignored and the weekday is not checked against
/// the date. nullopt on anything else, including an impossible date or a leap second.
std::optional<time_point> parse_http_date(std::string_view text);

/// ISO 8601 as S3 writes it in XML, "2009-10-12T17:50:30.000Z"; sub-millisecond precision is truncated.
std::string format_iso8601(time_point t);

/// Parses "YYYY-MM-DDTHH:MM:SS[.fraction]Z" (fraction of 1 to 9 digits). nullopt otherwise.
std::optional<time_point> parse_iso8601(std::string_view text);

/// The ISO 8601 basic form of x-amz-date, "20130524T000000Z"; sub-second precision is truncated.
std::string format_amz_date(time_point t);

/// Parses exactly "YYYYMMDDTHHMMSSZ". nullopt on any other shape or an impossible date.
std::optional<time_point> parse_amz_date(std::string_view text);

} // namespace depot
