#include "auth/post_signature.hpp"
#include "auth/sigv2.hpp"

#include <doctest/doctest.h>

using namespace depot;
using namespace depot::auth;

namespace {

using fields_t = std::vector<std::pair<std::string, std::string>>;

fields_t v4_fields(std::string signature)
{
    return {{"key", "k"},
            {"x-amz-algorithm", "AWS4-HMAC-SHA256"},
            {"x-amz-credential", "AKID/20151229/us-east-1/s3/aws4_request"},
            {"x-amz-date", "20151229T000000Z"},
            {"policy", "eyJleHBpcmF0aW9uIjoiMjAxNS0xMi0zMFQxMjowMDowMC4wMDBaIiwiY29uZGl0aW9ucyI6W119"},
            {"x-amz-signature", std::move(signature)}};
}

} // namespace

TEST_CASE("POST SigV4: the signature is HMAC-SHA256 of the base64 policy under the derived signing key")
{
    const std::string secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    const credential_scope scope{.date = "20151229", .region = "us-east-1", .service = "s3"};
    const auto good = post_policy_signature_v4(secret, scope, v4_fields("")[4].second);
    auto parsed = parse_post_credentials(v4_fields(good), "us-east-1");
    REQUIRE(parsed);
    REQUIRE(*parsed);
    CHECK((*parsed)->version == 4);
    CHECK((*parsed)->access_key_id == "AKID");
    CHECK(verify_post_signature(**parsed, secret));
    CHECK(verify_post_signature(**parsed, "another secret").error().code == errc::signature_does_not_match);

    auto tampered = v4_fields(good);
    tampered[4].second = "eyJ9";
    auto p = parse_post_credentials(tampered, "us-east-1");
    REQUIRE(p);
    CHECK(verify_post_signature(**p, secret).error().code == errc::signature_does_not_match);

    CHECK(parse_post_credentials(v4_fields(good), "eu-west-1").error().code == errc::invalid_argument);
    auto other_day = v4_fields(good);
    other_day[3].second = "20151230T000000Z";
    CHECK(parse_post_credentials(other_day, "us-east-1").error().code == errc::invalid_argument);
    auto no_policy = v4_fields(good);
    no_policy.erase(no_policy.begin() + 4);
    auto missing = parse_post_credentials(no_policy, "us-east-1");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message.starts_with("Bucket POST must contain a field named 'policy'."));
    auto both = v4_fields(good);
    both.push_back({"awsaccesskeyid", "AKID"});
    CHECK(parse_post_credentials(both, "us-east-1").error().code == errc::invalid_argument);
}

TEST_CASE("POST SigV2: base64 HMAC-SHA1 of the base64 policy; no credentials at all is anonymous")
{
    const std::string policy = "eyJleHBpcmF0aW9uIjoiMjAxNS0xMi0zMFQxMjowMDowMC4wMDBaIiwiY29uZGl0aW9ucyI6W119";
    fields_t f = {{"key", "k"},
                  {"awsaccesskeyid", "AKID"},
                  {"policy", policy},
                  {"signature", sigv2::signature("secret", policy)}};
    auto parsed = parse_post_credentials(f, "us-east-1");
    REQUIRE(parsed);
    REQUIRE(*parsed);
    CHECK((*parsed)->version == 2);
    CHECK(verify_post_signature(**parsed, "secret"));
    CHECK_FALSE(verify_post_signature(**parsed, "secreT"));

    auto anonymous = parse_post_credentials({{"key", "k"}, {"policy", policy}}, "us-east-1");
    REQUIRE(anonymous);
    CHECK_FALSE(*anonymous);
    CHECK(
        parse_post_credentials({{"awsaccesskeyid", "AKID"}, {"policy", policy}}, "us-east-1").error().code ==
        errc::invalid_argument);
}
