#include "common/hash.hpp"

#include <doctest/doctest.h>

using namespace depot;

TEST_CASE("md5 and sha256 match the published empty-string and abc vectors")
{
    CHECK(to_hex(md5("")) == "d41d8cd98f00b204e9800998ecf8427e");
    CHECK(to_hex(sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(to_hex(sha256("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(to_hex(sha1("abc")) == "a9993e364706816aba3e25717850c26c9cd0d89d");
}

TEST_CASE("incremental hashing equals one-shot hashing")
{
    hasher h(digest_kind::sha256);
    h.update("a");
    h.update("bc");
    CHECK(h.finish() == sha256("abc"));
    h.reset();
    CHECK(h.finish() == sha256(""));
}

TEST_CASE("hmac-sha256 matches RFC 4231 test case 2")
{
    CHECK(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")) ==
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST_CASE("hex and base64 round-trip and reject malformed input")
{
    CHECK(from_hex("00ff10").value() == std::string("\x00\xff\x10", 3));
    CHECK_FALSE(from_hex("abc").has_value());
    CHECK_FALSE(from_hex("zz").has_value());
    CHECK(to_base64("") == "");
    CHECK(to_base64("f") == "Zg==");
    CHECK(to_base64("foobar") == "Zm9vYmFy");
    CHECK(from_base64("Zg==").value() == "f");
    CHECK(from_base64("Zm8=").value() == "fo");
    CHECK(from_base64("Zm9vYmFy").value() == "foobar");
    CHECK_FALSE(from_base64("Zm9").has_value());
    CHECK_FALSE(from_base64("Z=9v").has_value());
    CHECK(constant_time_equal("abc", "abc"));
    CHECK_FALSE(constant_time_equal("abc", "abd"));
    CHECK_FALSE(constant_time_equal("abc", "ab"));
}
