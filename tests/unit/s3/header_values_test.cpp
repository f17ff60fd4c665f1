#include "s3/header_values.hpp"
#include "s3/names.hpp"
#include "s3/utf8.hpp"

#include <doctest/doctest.h>
#include <string>
#include <utility>
#include <vector>

using namespace depot;
using namespace depot::s3;
using namespace std::string_literals;

TEST_CASE("tokens are the characters HTTP allows in a header name")
{
    CHECK(is_token("content-type"));
    CHECK(is_token("X-Amz-Meta-Run_42"));
    CHECK(is_token("!#$%&'*+-.^_`|~"));
    for (const std::string& bad :
         {""s, "a b"s, "x:y"s, "a\r\nSet-Cookie"s, "a\tb"s, "(c)"s, "a/b"s, "\xc3\xa9"s, "a\0b"s})
        CHECK_MESSAGE(!is_token(bad), bad);
}

TEST_CASE("field values refuse control characters and bytes that are not UTF-8")
{
    CHECK(is_field_value(""));
    CHECK(is_field_value("text/plain; charset=utf-8"));
    CHECK(is_field_value("attachment; filename=\"r\xc3\xa9sum\xc3\xa9.pdf\""));
    CHECK(is_field_value("a\tb"));
    for (const std::string& bad : {"text/plain\r\nSet-Cookie: x=1"s, "a\nb"s, "a\rb"s, "a\0b"s, "a\x7f"s,
                                   "a\x01"s, "text/\xff\xfe"s, "\xc0\xaf"s, "\xed\xa0\x80"s})
        CHECK_MESSAGE(!is_field_value(bad), bad);
}

TEST_CASE("validate_field_value names where the bad value came from")
{
    CHECK(validate_field_value("Content-Type", "text/plain"));
    auto bad = validate_field_value("response-content-type", "a\r\nb");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == errc::invalid_argument);
    CHECK(bad.error().argument == "response-content-type");
    CHECK(bad.error().message.find("response-content-type") != std::string::npos);
}

TEST_CASE("user metadata names must be tokens and values field values")
{
    using meta = std::vector<std::pair<std::string, std::string>>;
    CHECK(validate_user_metadata(meta{{"run", "42"}, {"note", "caf\xc3\xa9"}}));
    for (const auto& bad : {meta{{"bad name", "v"}}, meta{{"x:y", "v"}}, meta{{"", "v"}},
                            meta{{"note", "a\r\nSet-Cookie: x=1"}}, meta{{"note", "\xff"}}}) {
        auto r = validate_user_metadata(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::invalid_argument);
    }
}

TEST_CASE("storable text is UTF-8 without NUL")
{
    CHECK(is_storable_text(""));
    CHECK(is_storable_text("dir/caf\xc3\xa9"));
    for (const std::string& bad : {"a\0b"s, "\xff"s, "\xc0\xaf"s, "\xed\xa0\x80"s, "\xf4\x90\x80\x80"s})
        CHECK_MESSAGE(!is_storable_text(bad), bad);
}
