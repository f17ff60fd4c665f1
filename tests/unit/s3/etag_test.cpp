#include "s3/etag.hpp"

#include <doctest/doctest.h>
#include <vector>

using namespace depot;
using namespace depot::s3;

TEST_CASE("ETags are quoted on the wire and unquoted from any client form")
{
    CHECK(quote_etag("abc") == "\"abc\"");
    CHECK(unquote_etag("\"abc\"") == "abc");
    CHECK(unquote_etag("abc") == "abc");
    CHECK(unquote_etag(" W/\"abc\" ") == "abc");
    CHECK(unquote_etag("\"") == "\"");
    CHECK(unquote_etag("") == "");
}

TEST_CASE("a multipart ETag is the MD5 of the part MD5s with the part count")
{
    // Two parts whose ETags are md5("a") and md5("b").
    const std::vector<std::string> parts = {"0cc175b9c0f1b6a831c399e269772661",
                                            "\"92eb5ffee6ae2fec3ad71c777531578f\""};
    // md5(bytes(md5("a")) + bytes(md5("b"))), computed independently with Python's hashlib.
    CHECK(multipart_etag(parts).value() == "96e024ba2074fe77e8e965ba43a704be-2");
    CHECK(multipart_etag(std::vector<std::string>{}).error().code == errc::invalid_argument);
    CHECK(multipart_etag(std::vector<std::string>{"xyz"}).error().code == errc::invalid_part);
}
