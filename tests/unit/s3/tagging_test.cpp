#include "s3/tagging.hpp"

#include <doctest/doctest.h>

using namespace depot;
using namespace depot::s3;

TEST_CASE("x-amz-tagging is URL query form: percent escapes, '+' as space, keys without '='")
{
    auto tags = parse_tagging_header("a=1&b=two%20words&c+d=x+y&empty&=");
    REQUIRE_FALSE(tags);
    CHECK(tags.error().code == errc::invalid_tag); // "=": an empty key

    tags = parse_tagging_header("a=1&b=two%20words&c+d=x+y&empty");
    REQUIRE(tags);
    REQUIRE(tags->size() == 4);
    CHECK((*tags)[1].value == "two words");
    CHECK((*tags)[2].key == "c d");
    CHECK((*tags)[2].value == "x y");
    CHECK((*tags)[3].key == "empty");
    CHECK((*tags)[3].value.empty());
    CHECK(parse_tagging_header("").value().empty());
    CHECK(parse_tagging_header("k=%C3%A9").value()[0].value == "\xC3\xA9");
}

TEST_CASE("x-amz-tagging refuses what S3 refuses")
{
    auto code = [](std::string_view h) { return parse_tagging_header(h).error().code; };
    CHECK(code("a=1&a=2") == errc::invalid_argument);
    CHECK(code("a=%zz") == errc::invalid_argument);
    CHECK(code("aws:x=1") == errc::invalid_tag);
    CHECK(code("k=" + std::string(257, 'v')) == errc::invalid_tag);
    CHECK(code(std::string(129, 'k') + "=v") == errc::invalid_tag);
    // NUL and broken UTF-8 cannot be stored as text: refused, not a database error.
    CHECK(code("k=%00") == errc::invalid_tag);
    CHECK(code("k=%C3") == errc::invalid_tag);
    std::string eleven;
    for (int i = 0; i < 11; ++i)
        eleven += "k" + std::to_string(i) + "=v&";
    CHECK(code(eleven) == errc::invalid_tag);
}

TEST_CASE("a tag set's limits: 10 for objects, 50 for buckets, with S3's messages")
{
    std::vector<tag> eleven;
    for (int i = 0; i < 11; ++i)
        eleven.push_back({.key = "k" + std::to_string(i), .value = ""});
    CHECK(check_tag_set(eleven, max_object_tags).error().message == "Object tags cannot be greater than 10");
    CHECK(check_tag_set(eleven, max_bucket_tags));
    std::vector<tag> fifty_one;
    for (int i = 0; i < 51; ++i)
        fifty_one.push_back({.key = "k" + std::to_string(i), .value = ""});
    CHECK(check_tag_set(fifty_one, max_bucket_tags).error().message ==
          "Bucket tag count cannot be greater than 50");
}
