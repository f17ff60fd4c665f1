#include "auth/amz_time.hpp"

#include <doctest/doctest.h>

using namespace depot::auth;
using namespace std::chrono;

namespace {

system_clock::time_point at(int y, unsigned m, unsigned d, int hh, int mm, int ss)
{
    return sys_days{year{y} / month{m} / day{d}} + hours{hh} + minutes{mm} + seconds{ss};
}

} // namespace

TEST_CASE("amz dates parse and format in the ISO 8601 basic form")
{
    CHECK(parse_amz_date("20130524T000000Z") == at(2013, 5, 24, 0, 0, 0));
    CHECK(parse_amz_date("20240229T235959Z") == at(2024, 2, 29, 23, 59, 59));
    CHECK(format_amz_date(at(2013, 5, 24, 0, 0, 0)) == "20130524T000000Z");
    CHECK(format_amz_date(at(2024, 12, 31, 23, 59, 59) + milliseconds(999)) == "20241231T235959Z");
}

TEST_CASE("amz dates reject other shapes and impossible dates")
{
    CHECK_FALSE(parse_amz_date(""));
    CHECK_FALSE(parse_amz_date("20130524T000000"));
    CHECK_FALSE(parse_amz_date("20130524T000000z"));
    CHECK_FALSE(parse_amz_date("2013-05-24T00:00:00Z"));
    CHECK_FALSE(parse_amz_date("20130524 000000Z"));
    CHECK_FALSE(parse_amz_date("20230229T000000Z"));
    CHECK_FALSE(parse_amz_date("20131324T000000Z"));
    CHECK_FALSE(parse_amz_date("20130524T240000Z"));
    CHECK_FALSE(parse_amz_date("20130524T000060Z"));
    CHECK_FALSE(parse_amz_date("2013052AT000000Z"));
}

TEST_CASE("http dates parse in all three RFC 7231 forms")
{
    auto expected = at(2013, 5, 24, 0, 0, 0);
    CHECK(parse_http_date("Fri, 24 May 2013 00:00:00 GMT") == expected);
    CHECK(parse_http_date("  Fri, 24 May 2013 00:00:00 GMT ") == expected);
    CHECK(parse_http_date("Friday, 24-May-13 00:00:00 GMT") == expected);
    CHECK(parse_http_date("Fri May 24 00:00:00 2013") == expected);
    CHECK(parse_http_date("Sat May  4 10:20:30 2013") == at(2013, 5, 4, 10, 20, 30));
    CHECK(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT") == at(1994, 11, 6, 8, 49, 37));
}

TEST_CASE("http dates reject malformed input")
{
    CHECK_FALSE(parse_http_date(""));
    CHECK_FALSE(parse_http_date("Fri, 24 May 2013 00:00:00 UTC"));
    CHECK_FALSE(parse_http_date("Fri, 24 Foo 2013 00:00:00 GMT"));
    CHECK_FALSE(parse_http_date("Xyz, 24 May 2013 00:00:00 GMT"));
    CHECK_FALSE(parse_http_date("Fri, 31 Jun 2013 00:00:00 GMT"));
    CHECK_FALSE(parse_http_date("Fri, 24 May 2013 25:00:00 GMT"));
    CHECK_FALSE(parse_http_date("Fri,24 May 2013 00:00:00 GMT"));
    CHECK_FALSE(parse_http_date("20130524T000000Z"));
}
