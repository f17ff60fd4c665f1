#include "s3/conditions.hpp"

#include <doctest/doctest.h>

using namespace depot;
using namespace depot::s3;
using std::chrono::day, std::chrono::hours, std::chrono::microseconds, std::chrono::milliseconds;
using std::chrono::minutes, std::chrono::month, std::chrono::nanoseconds, std::chrono::seconds;
using std::chrono::sys_days, std::chrono::year;

namespace {

// Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT, plus milliseconds that HTTP dates cannot express.
const time_point modified =
    time_point(sys_days(year{1994} / 11 / 6)) + hours(8) + minutes(49) + seconds(37) + milliseconds(250);
constexpr std::string_view etag = "abc";
constexpr std::string_view before = "Sun, 06 Nov 1994 08:49:36 GMT";
constexpr std::string_view same = "Sun, 06 Nov 1994 08:49:37 GMT";
constexpr std::string_view after = "Sun, 06 Nov 1994 08:49:38 GMT";

condition_result read(read_conditions c)
{
    return evaluate_read_conditions(c, etag, modified);
}
condition_result copy(read_conditions c)
{
    return evaluate_copy_source_conditions(c, etag, modified);
}

} // namespace

TEST_CASE("no conditions proceed")
{
    CHECK(read({}) == condition_result::proceed);
    CHECK(read_conditions{}.empty());
}

TEST_CASE("If-Match compares strong ETags with or without quotes")
{
    CHECK(read({.if_match = "\"abc\""}) == condition_result::proceed);
    CHECK(read({.if_match = "abc"}) == condition_result::proceed);
    CHECK(read({.if_match = "*"}) == condition_result::proceed);
    CHECK(read({.if_match = "\"x\", \"abc\""}) == condition_result::proceed);
    CHECK(read({.if_match = "\"x\""}) == condition_result::precondition_failed);
    CHECK(read({.if_match = "W/\"abc\""}) == condition_result::precondition_failed);
    CHECK(read({.if_match = ""}) == condition_result::precondition_failed);
}

TEST_CASE("If-None-Match answers 304 on a match, weak tags included")
{
    CHECK(read({.if_none_match = "\"abc\""}) == condition_result::not_modified);
    CHECK(read({.if_none_match = "W/\"abc\""}) == condition_result::not_modified);
    CHECK(read({.if_none_match = "*"}) == condition_result::not_modified);
    CHECK(read({.if_none_match = "\"a\",\"b\""}) == condition_result::proceed);
}

TEST_CASE("date conditions compare at second precision")
{
    CHECK(read({.if_modified_since = before}) == condition_result::proceed);
    CHECK(read({.if_modified_since = same}) == condition_result::not_modified);
    CHECK(read({.if_modified_since = after}) == condition_result::not_modified);
    CHECK(read({.if_unmodified_since = before}) == condition_result::precondition_failed);
    CHECK(read({.if_unmodified_since = same}) == condition_result::proceed);
    CHECK(read({.if_unmodified_since = after}) == condition_result::proceed);
}

TEST_CASE("unparseable dates are ignored")
{
    CHECK(read({.if_modified_since = "not a date"}) == condition_result::proceed);
    CHECK(read({.if_unmodified_since = "2009-10-12T17:50:30.000Z"}) == condition_result::proceed);
}

TEST_CASE("S3's documented combinations")
{
    // If-Match true and If-Unmodified-Since false: 200.
    CHECK(read({.if_match = "\"abc\"", .if_unmodified_since = before}) == condition_result::proceed);
    // If-None-Match false (it matches) and If-Modified-Since true: 304.
    CHECK(read({.if_none_match = "\"abc\"", .if_modified_since = before}) == condition_result::not_modified);
    // If-None-Match true (no match) makes If-Modified-Since irrelevant.
    CHECK(read({.if_none_match = "\"x\"", .if_modified_since = after}) == condition_result::proceed);
    // If-Match false wins over everything else.
    CHECK(read({.if_match = "\"x\"", .if_none_match = "\"abc\""}) == condition_result::precondition_failed);
    // A failing If-Unmodified-Since is checked before If-None-Match.
    CHECK(read({.if_none_match = "\"abc\"", .if_unmodified_since = before}) ==
          condition_result::precondition_failed);
}

TEST_CASE("copy-source conditions answer 412 where reads answer 304")
{
    CHECK(copy({.if_none_match = "\"abc\""}) == condition_result::precondition_failed);
    CHECK(copy({.if_modified_since = after}) == condition_result::precondition_failed);
    CHECK(copy({.if_none_match = "\"abc\"", .if_modified_since = before}) ==
          condition_result::precondition_failed);
    CHECK(copy({.if_match = "\"abc\"", .if_unmodified_since = before}) == condition_result::proceed);
    CHECK(copy({.if_match = "\"x\""}) == condition_result::precondition_failed);
    CHECK(copy({.if_modified_since = before}) == condition_result::proceed);
}

TEST_CASE("condition results convert to errors")
{
    CHECK(to_result(condition_result::proceed).has_value());
    CHECK(to_result(condition_result::not_modified).error().code == errc::not_modified);
    CHECK(to_result(condition_result::precondition_failed).error().code == errc::precondition_failed);
}

TEST_CASE("write conditions: If-None-Match * only creates, If-Match only replaces that ETag")
{
    CHECK(evaluate_write_conditions({}, std::nullopt).has_value());
    CHECK(evaluate_write_conditions({}, "abc").has_value());

    CHECK(evaluate_write_conditions({.if_none_match = "*"}, std::nullopt).has_value());
    CHECK(evaluate_write_conditions({.if_none_match = "*"}, "abc").error().code == errc::precondition_failed);
    // A list of ETags: refused only when it names the current one.
    CHECK(evaluate_write_conditions({.if_none_match = "\"abc\""}, std::nullopt).has_value());
    CHECK(evaluate_write_conditions({.if_none_match = "\"abc\""}, "abc").error().code ==
          errc::precondition_failed);
    CHECK(evaluate_write_conditions({.if_none_match = "\"x\", W/\"abc\""}, "abc").error().code ==
          errc::precondition_failed);
    CHECK(evaluate_write_conditions({.if_none_match = "\"x\""}, "abc").has_value());
    CHECK(evaluate_write_conditions({.if_match = "\"abc\"", .if_none_match = "*"}, "abc").error().code ==
          errc::not_implemented);

    CHECK(evaluate_write_conditions({.if_match = "\"abc\""}, "abc").has_value());
    CHECK(evaluate_write_conditions({.if_match = "abc"}, "abc").has_value());
    CHECK(evaluate_write_conditions({.if_match = "*"}, "abc").has_value());
    CHECK(evaluate_write_conditions({.if_match = "\"x\""}, "abc").error().code == errc::precondition_failed);
    CHECK(evaluate_write_conditions({.if_match = "\"abc\""}, std::nullopt).error().code == errc::no_such_key);
}

TEST_CASE("If-Range holds only for the representation it names")
{
    CHECK(if_range_holds("\"abc\"", etag, modified));
    CHECK(if_range_holds(" \"abc\" ", etag, modified));
    CHECK_FALSE(if_range_holds("\"abd\"", etag, modified));
    CHECK_FALSE(if_range_holds("W/\"abc\"", etag, modified)); // a weak tag never holds
    CHECK_FALSE(if_range_holds("\"abc", etag, modified));
    CHECK(if_range_holds(same, etag, modified)); // the date, to the second
    CHECK_FALSE(if_range_holds(before, etag, modified));
    CHECK_FALSE(if_range_holds(after, etag, modified)); // later is not "the same": RFC 9110 13.1.5
    CHECK_FALSE(if_range_holds("yesterday", etag, modified));
    CHECK_FALSE(if_range_holds("", etag, modified));
}
