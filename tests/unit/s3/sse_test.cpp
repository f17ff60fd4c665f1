#include "common/hash.hpp"
#include "s3/sse.hpp"

#include <doctest/doctest.h>
#include <map>

using namespace depot;

namespace {

s3::header_lookup headers(std::map<std::string, std::string> h)
{
    return [h = std::move(h)](std::string_view name) -> std::optional<std::string_view> {
        auto it = h.find(std::string(name));
        if (it == h.end())
            return std::nullopt;
        return std::string_view(it->second);
    };
}

const std::string key(32, '\x07');
const std::string key_b64 = to_base64(key);
const std::string key_md5 = to_base64(md5(key));

std::map<std::string, std::string> sse_c(std::string prefix = "x-amz-")
{
    return {{prefix + "server-side-encryption-customer-algorithm", "AES256"},
            {prefix + "server-side-encryption-customer-key", key_b64},
            {prefix + "server-side-encryption-customer-key-md5", key_md5}};
}

} // namespace

TEST_CASE("SSE headers: none, SSE-S3, SSE-C and the copy-source form")
{
    auto none = s3::parse_sse_headers(headers({}));
    REQUIRE(none);
    CHECK_FALSE(none->sse_s3);
    CHECK(none->customer_key.empty());

    auto s3 = s3::parse_sse_headers(headers({{"x-amz-server-side-encryption", "AES256"}}));
    REQUIRE(s3);
    CHECK(s3->sse_s3);

    auto c = s3::parse_sse_headers(headers(sse_c()));
    REQUIRE(c);
    CHECK(c->customer_key == key);
    CHECK(c->customer_key_md5 == key_md5);

    auto copy = s3::parse_sse_headers(headers(sse_c("x-amz-copy-source-")), "x-amz-copy-source-");
    REQUIRE(copy);
    CHECK(copy->customer_key == key);
    // The copy source's headers are not the request's own.
    auto own = s3::parse_sse_headers(headers(sse_c("x-amz-copy-source-")));
    REQUIRE(own);
    CHECK(own->customer_key.empty());
}

TEST_CASE("SSE headers S3 refuses, with its messages")
{
    auto refused = [](std::map<std::string, std::string> h) {
        auto r = s3::parse_sse_headers(headers(std::move(h)));
        REQUIRE_FALSE(r);
        return r.error();
    };
    CHECK(refused({{"x-amz-server-side-encryption", "AES128"}}).code == errc::invalid_argument);
    CHECK(refused({{"x-amz-server-side-encryption", "aws:kms"}}).code == errc::not_implemented);
    CHECK(refused({{"x-amz-server-side-encryption", "aws:kms:dsse"}}).code == errc::not_implemented);
    CHECK(refused({{"x-amz-server-side-encryption-aws-kms-key-id", "k"}}).code == errc::not_implemented);
    {
        auto h = sse_c();
        h["x-amz-server-side-encryption"] = "AES256";
        CHECK(refused(h).message.find("incompatible") != std::string::npos);
    }
    {
        auto h = sse_c();
        h["x-amz-server-side-encryption-customer-algorithm"] = "AES128";
        CHECK(refused(h).code == errc::invalid_argument);
    }
    {
        auto h = sse_c();
        h.erase("x-amz-server-side-encryption-customer-algorithm");
        CHECK(refused(h).message.find("valid encryption algorithm") != std::string::npos);
    }
    {
        auto h = sse_c();
        h.erase("x-amz-server-side-encryption-customer-key");
        CHECK(refused(h).message.find("appropriate secret key") != std::string::npos);
    }
    {
        auto h = sse_c();
        h["x-amz-server-side-encryption-customer-key"] = to_base64(std::string(16, 'k')); // 128 bits
        CHECK(refused(h).message == "The secret key was invalid for the specified algorithm.");
    }
    {
        auto h = sse_c();
        h["x-amz-server-side-encryption-customer-key"] = "not base64!";
        CHECK(refused(h).message == "The secret key was invalid for the specified algorithm.");
    }
    {
        auto h = sse_c();
        h.erase("x-amz-server-side-encryption-customer-key-md5");
        CHECK(refused(h).message.find("client calculated MD5") != std::string::npos);
    }
    {
        auto h = sse_c();
        h["x-amz-server-side-encryption-customer-key-md5"] = to_base64(md5("another key"));
        const auto e = refused(h);
        CHECK(e.code == errc::invalid_argument);
        CHECK(e.message == "The calculated MD5 hash of the key did not match the hash that was provided.");
    }
}

TEST_CASE("bucket encryption documents")
{
    const std::string aes =
        R"(<ServerSideEncryptionConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">)"
        R"(<Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm>)"
        R"(</ApplyServerSideEncryptionByDefault><BucketKeyEnabled>true</BucketKeyEnabled></Rule>)"
        R"(</ServerSideEncryptionConfiguration>)";
    auto parsed = s3::parse_bucket_encryption(aes);
    REQUIRE(parsed);
    CHECK(*parsed == "AES256");
    // What GetBucketEncryption returns parses back to the same.
    auto again = s3::parse_bucket_encryption(s3::bucket_encryption_xml("AES256"));
    REQUIRE(again);
    CHECK(*again == "AES256");

    auto kms = s3::parse_bucket_encryption(
        R"(<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault>)"
        R"(<SSEAlgorithm>aws:kms</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule>)"
        R"(</ServerSideEncryptionConfiguration>)");
    REQUIRE_FALSE(kms);
    CHECK(kms.error().code == errc::not_implemented);
    for (std::string_view bad :
         {"<ServerSideEncryptionConfiguration/>", "<Other/>", "not xml",
          "<ServerSideEncryptionConfiguration><Rule/></ServerSideEncryptionConfiguration>",
          "<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>DES"
          "</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule></"
          "ServerSideEncryptionConfiguration>"}) {
        CAPTURE(bad);
        auto r = s3::parse_bucket_encryption(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::malformed_xml);
    }
}
