#include "s3/names.hpp"

#include <doctest/doctest.h>
#include <vector>

using namespace depot;
using namespace depot::s3;

namespace {

bool bucket_ok(std::string_view name)
{
    return validate_bucket_name(name).has_value();
}

errc key_error(std::string_view key)
{
    return validate_object_key(key).error().code;
}

} // namespace

TEST_CASE("valid bucket names")
{
    CHECK(bucket_ok("abc"));
    CHECK(bucket_ok("my-bucket.example"));
    CHECK(bucket_ok("1bucket2"));
    CHECK(bucket_ok(std::string(63, 'a')));
    CHECK(bucket_ok("192.168.5.com"));
    CHECK(bucket_ok("1.2.3"));
    CHECK(bucket_ok("a-s3alias-b"));
}

TEST_CASE("bucket names breaking S3's rules are rejected with a reason")
{
    for (std::string_view bad : {"ab",
                                 "Abc",
                                 "a_b",
                                 "a b",
                                 "-abc",
                                 "abc-",
                                 ".abc",
                                 "abc.",
                                 "a..b",
                                 "192.168.5.4",
                                 "1.2.3.4",
                                 "xn--abc",
                                 "sthree-abc",
                                 "amzn-s3-demo-x",
                                 "abc-s3alias",
                                 "abc--ol-s3",
                                 "abc.mrap",
                                 "abc--x-s3",
                                 "abc--table-s3",
                                 "caf\xC3\xA9"}) {
        CAPTURE(bad);
        auto r = validate_bucket_name(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::invalid_bucket_name);
        CHECK_FALSE(r.error().message.empty());
    }
    CHECK_FALSE(bucket_ok(std::string(64, 'a')));
    CHECK_FALSE(bucket_ok(""));
}

TEST_CASE("object keys are 1 to 1024 bytes of UTF-8 without NUL")
{
    CHECK(validate_object_key("a"));
    CHECK(validate_object_key("photos/2024/caf\xC3\xA9 \xF0\x9F\x98\x80.jpg"));
    CHECK(validate_object_key(std::string(1024, 'k')));
    CHECK(validate_object_key("\xEF\xBF\xBF"));     // U+FFFF is a noncharacter but valid UTF-8
    CHECK(validate_object_key("\xF4\x8F\xBF\xBF")); // U+10FFFF
    CHECK(key_error(std::string(1025, 'k')) == errc::key_too_long);
    CHECK(key_error("") == errc::invalid_object_name);
    CHECK(key_error(std::string("a\0b", 3)) == errc::invalid_object_name);
    CHECK(key_error("\xC0\xAF") == errc::invalid_object_name);         // overlong '/'
    CHECK(key_error("\xE0\x80\xAF") == errc::invalid_object_name);     // overlong '/'
    CHECK(key_error("\xED\xA0\x80") == errc::invalid_object_name);     // U+D800
    CHECK(key_error("\xF4\x90\x80\x80") == errc::invalid_object_name); // above U+10FFFF
    CHECK(key_error("\xC3") == errc::invalid_object_name);             // truncated
    CHECK(key_error("\x80") == errc::invalid_object_name);             // stray continuation
    CHECK(key_error("\xFF") == errc::invalid_object_name);
}

TEST_CASE("prefix_successor increments the last code point")
{
    CHECK(prefix_successor("abc") == "abd");
    CHECK(prefix_successor("photos/") == "photos0");
    CHECK(prefix_successor("a\x7F") == "a\xC2\x80");
    CHECK(prefix_successor("\xC3\xA9") == "\xC3\xAA");
    CHECK(prefix_successor("a\xDF\xBF") == "a\xE0\xA0\x80");         // U+07FF -> U+0800
    CHECK(prefix_successor("a\xED\x9F\xBF") == "a\xEE\x80\x80");     // U+D7FF skips the surrogates
    CHECK(prefix_successor("a\xEF\xBF\xBF") == "a\xF0\x90\x80\x80"); // U+FFFF -> U+10000
}

TEST_CASE("prefix_successor drops trailing U+10FFFF and has no answer for an empty prefix")
{
    CHECK(prefix_successor("") == "");
    CHECK(prefix_successor("a\xF4\x8F\xBF\xBF") == "b");
    CHECK(prefix_successor("\xF4\x8F\xBF\xBF\xF4\x8F\xBF\xBF") == "");
}

TEST_CASE("prefix_successor bounds every string with the prefix and nothing smaller")
{
    const std::string prefix = "dir/\xC3\xA9";
    const auto next = prefix_successor(prefix);
    for (std::string_view key : {"dir/\xC3\xA9", "dir/\xC3\xA9/x", "dir/\xC3\xA9\xF4\x8F\xBF\xBF"})
        CHECK(std::string_view(key) < next);
    CHECK(next == "dir/\xC3\xAA");
}

TEST_CASE("prefix_successor uses the well-formed part of a malformed prefix")
{
    CHECK(prefix_successor("ab\xFF") == "ac");
    CHECK(prefix_successor("\xFF") == "");
}

TEST_CASE("user metadata may total 2 KiB of names and values")
{
    std::vector<std::pair<std::string, std::string>> meta = {{"a", std::string(2047, 'v')}};
    CHECK(validate_user_metadata(meta));
    meta.emplace_back("b", "");
    CHECK(validate_user_metadata(meta).error().code == errc::metadata_too_large);
    CHECK(validate_user_metadata({}));
}
