#include "s3/request_headers.hpp"

#include <doctest/doctest.h>

using namespace depot;
using namespace depot::s3;

TEST_CASE("headers naming a feature Depot lacks are refused with 501, whatever their case")
{
    for (const char* name :
         {"x-amz-server-side-encryption-aws-kms-key-id", "X-Amz-Server-Side-Encryption-Context",
          "x-amz-server-side-encryption-bucket-key-enabled", "x-amz-website-redirect-location",
          "x-amz-write-offset-bytes", "x-amz-mfa", "x-amz-bucket-object-lock-token"}) {
        CAPTURE(name);
        auto r = check_request_header(name, "AES256");
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::not_implemented);
        CHECK(r.error().argument == name);
        CHECK(r.error().message.find(name) != std::string::npos);
    }
}

TEST_CASE("headers Depot honours or does not know pass")
{
    for (const char* name :
         {"x-amz-meta-server-side-encryption", "x-amz-tagging", "x-amz-checksum-sha256",
          "x-amz-expected-bucket-owner", "x-amz-request-payer", "content-type", "x-amz-mfa-x",
          "x-amz-object-lock-mode", "x-amz-server-side-encryptionx", "x-custom"})
        CHECK_MESSAGE(check_request_header(name, "v"), name);
}

TEST_CASE("x-amz-storage-class: STANDARD is every object's class, other classes 501, anything else 400")
{
    CHECK(check_request_header("x-amz-storage-class", "STANDARD"));
    auto glacier = check_request_header("X-Amz-Storage-Class", "GLACIER");
    REQUIRE_FALSE(glacier);
    CHECK(glacier.error().code == errc::not_implemented);
    for (const char* bad : {"standard", "", "COLD", "STANDARD "}) {
        CAPTURE(bad);
        auto r = check_request_header("x-amz-storage-class", bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::invalid_storage_class);
    }
}
