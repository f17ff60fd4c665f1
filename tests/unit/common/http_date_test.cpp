#include "common/http_date.hpp"

#include <doctest/doctest.h>

using namespace depot;
using std::chrono::day, std::chrono::hours, std::chrono::microseconds, std::chrono::milliseconds;
using std::chrono::minutes, std::chrono::month, std::chrono::nanoseconds, std::chrono::seconds;
using std::chrono::sys_days, std::chrono::year;

namespace {

time_point at(int y, unsigned mo, unsigned d, int h, int mi, int s, int ms = 0)
{
    return time_point(sys_days(year{y} / month{mo} / day{d})) + hours(h) + minutes(mi) + seconds(s) +
           milliseconds(ms);
}

} // namespace

TEST_CASE("format_http_date writes IMF-fixdate and truncates sub-seconds")
{
    CHECK(format_http_date(at(1994, 11, 6, 8, 49, 37, 999)) == "Sun, 06 Nov 1994 08:49:37 GMT");
    CHECK(format_http_date(time_point{}) == "Thu, 01 Jan 1970 00:00:00 GMT");
    CHECK(format_http_date(at(2024, 2, 29, 23, 59, 59)) == "Thu, 29 Feb 2024 23:59:59 GMT");
    CHECK(format_http_date(at(1969, 12, 31, 23, 59, 59, 500)) == "Wed, 31 Dec 1969 23:59:59 GMT");
}

TEST_CASE("parse_http_date accepts IMF-fixdate, RFC 850 and asctime")
{
    const auto expected = at(1994, 11, 6, 8, 49, 37);
    CHECK(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT") == expected);
    CHECK(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT") == expected);
    CHECK(parse_http_date("Sun Nov  6 08:49:37 1994") == expected);
    CHECK(parse_http_date("Sun Nov 06 08:49:37 1994") == expected);
    CHECK(parse_http_date("  Sun, 06 Nov 1994 08:49:37 GMT ") == expected);
    CHECK(parse_http_date("Thursday, 01-Jan-09 00:00:00 GMT") == at(2009, 1, 1, 0, 0, 0));
}

TEST_CASE("parse_http_date round-trips format_http_date")
{
    const auto t = at(2031, 7, 15, 12, 0, 1);
    CHECK(parse_http_date(format_http_date(t)) == t);
}

TEST_CASE("parse_http_date rejects malformed and impossible dates")
{
    CHECK_FALSE(parse_http_date(""));
    CHECK_FALSE(parse_http_date("yesterday"));
    CHECK_FALSE(parse_http_date("Sun, 06 Nov 1994 08:49:37"));
    CHECK_FALSE(parse_http_date("Sun, 06 Nov 1994 08:49:37 UTC"));
    CHECK_FALSE(parse_http_date("Sun, 6 Nov 1994 08:49:37 GMT"));
    CHECK_FALSE(parse_http_date("Sun, 31 Feb 1994 08:49:37 GMT"));
    CHECK_FALSE(parse_http_date("Sun, 06 Nov 1994 24:00:00 GMT"));
    CHECK_FALSE(parse_http_date("Sun, 06 Nov 1994 23:59:60 GMT"));
    CHECK_FALSE(parse_http_date("Sun, 06 Foo 1994 08:49:37 GMT"));
    CHECK_FALSE(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMTX"));
    CHECK_FALSE(parse_http_date("2009-10-12T17:50:30.000Z"));
}

TEST_CASE("format_iso8601 writes milliseconds and Z")
{
    CHECK(format_iso8601(at(2009, 10, 12, 17, 50, 30)) == "2009-10-12T17:50:30.000Z");
    CHECK(format_iso8601(at(2009, 10, 12, 17, 50, 30, 7) + microseconds(999)) == "2009-10-12T17:50:30.007Z");
}

TEST_CASE("parse_iso8601 accepts optional fractions and requires Z")
{
    CHECK(parse_iso8601("2009-10-12T17:50:30Z") == at(2009, 10, 12, 17, 50, 30));
    CHECK(parse_iso8601("2009-10-12T17:50:30.123Z") == at(2009, 10, 12, 17, 50, 30, 123));
    CHECK(parse_iso8601("2009-10-12T17:50:30.5Z") == at(2009, 10, 12, 17, 50, 30, 500));
    CHECK(parse_iso8601("2009-10-12T17:50:30.123456789Z") ==
          at(2009, 10, 12, 17, 50, 30, 123) + microseconds(456) + nanoseconds(789));
    CHECK_FALSE(parse_iso8601("2009-10-12T17:50:30.Z"));
    CHECK_FALSE(parse_iso8601("2009-10-12T17:50:30.1234567890Z"));
    CHECK_FALSE(parse_iso8601("2009-10-12T17:50:30"));
    CHECK_FALSE(parse_iso8601("2009-13-12T17:50:30Z"));
    CHECK_FALSE(parse_iso8601("2009-10-12 17:50:30Z"));
}

TEST_CASE("amz dates use the ISO 8601 basic form")
{
    const auto t = at(2013, 5, 24, 0, 0, 0);
    CHECK(format_amz_date(t + milliseconds(900)) == "20130524T000000Z");
    CHECK(parse_amz_date("20130524T000000Z") == t);
    CHECK_FALSE(parse_amz_date("20130524T000000"));
    CHECK_FALSE(parse_amz_date("20130524T000000Z "));
    CHECK_FALSE(parse_amz_date("20130230T000000Z"));
    CHECK_FALSE(parse_amz_date("2013-05-24T000000Z"));
}

TEST_CASE("dates beyond the clock's range are clamped instead of overflowing")
{
    const auto far = parse_http_date("Fri, 31 Dec 9999 23:59:59 GMT");
    REQUIRE(far);
    CHECK(*far > at(2200, 1, 1, 0, 0, 0));
    CHECK(*far < time_point::max());
    const auto early = parse_iso8601("0001-01-01T00:00:00.999999999Z");
    REQUIRE(early);
    CHECK(*early < at(1700, 1, 1, 0, 0, 0));
    CHECK(parse_amz_date("99991231T235959Z").has_value());
}

TEST_CASE("clamped dates at the clock's lower limit format without overflowing")
{
    // The day holding the earliest time the clock can hold starts before that time: converting it back to
    // nanoseconds overflowed. A Date header of year 1 reaches this (SigV4 formats it as the amz date);
    // found with the sigv4 fuzz target.
    const auto early = parse_http_date("Mon, 01 Jan 0001 00:00:00 GMT");
    REQUIRE(early);
    CHECK(format_amz_date(*early).starts_with("1677"));
    CHECK(format_http_date(*early).ends_with("1677 00:12:45 GMT"));
    CHECK(format_iso8601(*early).starts_with("1677-09-21T00:12:45"));
    CHECK(parse_amz_date(format_amz_date(*early)).has_value());
    const auto late = parse_amz_date("99991231T235959Z");
    REQUIRE(late);
    CHECK(format_amz_date(*late).starts_with("2262"));
}
