#include "common/uri.hpp"

#include <doctest/doctest.h>

using namespace depot;

TEST_CASE("uri_encode keeps only unreserved characters and optionally slashes")
{
    CHECK(uri_encode("a-b_c.d~e") == "a-b_c.d~e");
    CHECK(uri_encode("a b+c/d") == "a%20b%2Bc%2Fd");
    CHECK(uri_encode("a b+c/d", true) == "a%20b%2Bc/d");
    CHECK(uri_encode("\xc3\xa9") == "%C3%A9");
}

TEST_CASE("uri_decode decodes escapes and rejects malformed ones")
{
    CHECK(uri_decode("a%20b%2b").value() == "a b+");
    CHECK(uri_decode("a+b").value() == "a+b");
    CHECK(uri_decode("a+b", true).value() == "a b");
    CHECK_FALSE(uri_decode("%").has_value());
    CHECK_FALSE(uri_decode("%2").has_value());
    CHECK_FALSE(uri_decode("%zz").has_value());
}

TEST_CASE("parse_query splits pairs and keeps names without values")
{
    auto q = parse_query("list-type=2&prefix=a%2Fb&versioning&&x=").value();
    REQUIRE(q.size() == 4);
    CHECK(q[0] == std::pair<std::string, std::string>{"list-type", "2"});
    CHECK(q[1].second == "a/b");
    CHECK(q[2] == std::pair<std::string, std::string>{"versioning", ""});
    CHECK(q[3] == std::pair<std::string, std::string>{"x", ""});
    CHECK_FALSE(parse_query("a=%G0").has_value());
}
