// AWS's published S3 SigV4 examples, checked step by step: canonical request, string to sign, signature.
// Sources: "Signature Calculations for the Authorization Header: Transferring Payload in a Single Chunk"
// (sig-v4-header-based-auth) and "Authenticating Requests: Using Query Parameters" (sigv4-query-string-auth).
#include "common/http_date.hpp"
#include "auth/sigv4.hpp"

#include <doctest/doctest.h>
#include <vector>

using namespace depot;
using namespace depot::auth;

namespace {

constexpr std::string_view access_key = "AKIAIOSFODNN7EXAMPLE";
constexpr std::string_view secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
constexpr std::string_view host = "examplebucket.s3.amazonaws.com";
constexpr std::string_view scope_line = "20130524/us-east-1/s3/aws4_request";

std::chrono::system_clock::time_point example_time()
{
    return *parse_amz_date("20130524T000000Z");
}

/// Parses, checks every intermediate value, and verifies at the example's own time.
void check_example(std::string_view method, std::string_view target, const std::vector<header_view>& headers,
                   std::string_view expected_canonical, std::string_view expected_sts_hash,
                   std::string_view expected_signature)
{
    request_view req{method, target, headers};
    auto parsed = parse(req);
    REQUIRE(parsed.has_value());
    REQUIRE(parsed->has_value());
    const parsed_auth& auth = **parsed;
    CHECK(auth.access_key_id == access_key);
    CHECK(scope_string(auth.scope) == scope_line);
    CHECK(auth.amz_date == "20130524T000000Z");

    auto creq = canonical_request(req, auth);
    CHECK(creq == expected_canonical);
    auto sts = string_to_sign(auth, creq);
    CHECK(sts == std::string("AWS4-HMAC-SHA256\n20130524T000000Z\n") + std::string(scope_line) + "\n" +
                     std::string(expected_sts_hash));
    CHECK(signature(signing_key(secret, auth.scope), sts) == expected_signature);
    CHECK(verify(auth, req, secret, example_time(), {}).has_value());
}

std::string authorization(std::string_view signed_headers, std::string_view sig)
{
    return "AWS4-HMAC-SHA256 "
           "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=" +
           std::string(signed_headers) + ",Signature=" + std::string(sig);
}

} // namespace

TEST_CASE("the signing key follows the HMAC chain over date, region, service and aws4_request")
{
    auto key = signing_key(secret, {"20130524", "us-east-1", "s3"});
    CHECK(key.size() == 32);
    CHECK(key != signing_key(secret, {"20130525", "us-east-1", "s3"}));
    CHECK(key != signing_key(secret, {"20130524", "us-west-2", "s3"}));
}

TEST_CASE("the AWS GET Object example with a Range header verifies step by step")
{
    auto auth = authorization("host;range;x-amz-content-sha256;x-amz-date",
                              "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
    std::vector<header_view> headers{
        {"Host", host},
        {"Range", "bytes=0-9"},
        {"x-amz-content-sha256", empty_payload_hash},
        {"x-amz-date", "20130524T000000Z"},
        {"Authorization", auth},
    };
    check_example("GET", "/test.txt", headers,
                  "GET\n"
                  "/test.txt\n"
                  "\n"
                  "host:examplebucket.s3.amazonaws.com\n"
                  "range:bytes=0-9\n"
                  "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
                  "x-amz-date:20130524T000000Z\n"
                  "\n"
                  "host;range;x-amz-content-sha256;x-amz-date\n"
                  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                  "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972",
                  "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST_CASE("the AWS PUT Object example encodes '$' in the key and signs the Date header")
{
    const std::string_view payload = "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072";
    auto auth = authorization("date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
                              "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
    std::vector<header_view> headers{
        {"Host", host},
        {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
        {"Authorization", auth},
        {"x-amz-date", "20130524T000000Z"},
        {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
        {"x-amz-content-sha256", payload},
    };
    // The key is sent unencoded as "test$file.text"; S3 encodes it once for the canonical URI.
    check_example("PUT", "/test$file.text", headers,
                  "PUT\n"
                  "/test%24file.text\n"
                  "\n"
                  "date:Fri, 24 May 2013 00:00:00 GMT\n"
                  "host:examplebucket.s3.amazonaws.com\n"
                  "x-amz-content-sha256:44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072\n"
                  "x-amz-date:20130524T000000Z\n"
                  "x-amz-storage-class:REDUCED_REDUNDANCY\n"
                  "\n"
                  "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class\n"
                  "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
                  "9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d",
                  "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

TEST_CASE("the AWS GET Bucket Lifecycle example gives a value-less parameter an empty value")
{
    auto auth = authorization("host;x-amz-content-sha256;x-amz-date",
                              "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
    std::vector<header_view> headers{
        {"Host", host},
        {"Authorization", auth},
        {"x-amz-content-sha256", empty_payload_hash},
        {"x-amz-date", "20130524T000000Z"},
    };
    check_example("GET", "/?lifecycle", headers,
                  "GET\n"
                  "/\n"
                  "lifecycle=\n"
                  "host:examplebucket.s3.amazonaws.com\n"
                  "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
                  "x-amz-date:20130524T000000Z\n"
                  "\n"
                  "host;x-amz-content-sha256;x-amz-date\n"
                  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                  "9766c798316ff2757b517bc739a67f6213b4ab36dd5da2f94eaebf79c77395ca",
                  "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
}

TEST_CASE("the AWS GET Bucket (List Objects) example sorts the query parameters")
{
    auto auth = authorization("host;x-amz-content-sha256;x-amz-date",
                              "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
    std::vector<header_view> headers{
        {"Host", host},
        {"Authorization", auth},
        {"x-amz-content-sha256", empty_payload_hash},
        {"x-amz-date", "20130524T000000Z"},
    };
    check_example("GET", "/?prefix=J&max-keys=2", headers,
                  "GET\n"
                  "/\n"
                  "max-keys=2&prefix=J\n"
                  "host:examplebucket.s3.amazonaws.com\n"
                  "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
                  "x-amz-date:20130524T000000Z\n"
                  "\n"
                  "host;x-amz-content-sha256;x-amz-date\n"
                  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                  "df57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7",
                  "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST_CASE("the AWS presigned URL example verifies step by step and presign reproduces it")
{
    const std::string target =
        "/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
        "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
        "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404";
    std::vector<header_view> headers{{"Host", host}};
    request_view req{"GET", target, headers};
    auto parsed = parse(req);
    REQUIRE(parsed.has_value());
    REQUIRE(parsed->has_value());
    const parsed_auth& auth = **parsed;
    CHECK(auth.presigned);
    CHECK(auth.expires == std::chrono::seconds(86400));
    CHECK(auth.payload_hash == "UNSIGNED-PAYLOAD");
    CHECK(auth.mode == payload_mode::unsigned_payload);

    auto creq = canonical_request(req, auth);
    CHECK(creq ==
          "GET\n"
          "/test.txt\n"
          "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2F"
          "s3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host\n"
          "host:examplebucket.s3.amazonaws.com\n"
          "\n"
          "host\n"
          "UNSIGNED-PAYLOAD");
    auto sts = string_to_sign(auth, creq);
    CHECK(sts == "AWS4-HMAC-SHA256\n"
                 "20130524T000000Z\n"
                 "20130524/us-east-1/s3/aws4_request\n"
                 "3bfa292879f6447bbcda7001decf97f4a54dc650c8942174ae0a9121cf58ad04");
    CHECK(signature(signing_key(secret, auth.scope), sts) ==
          "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
    CHECK(verify(auth, req, secret, example_time() + std::chrono::hours(23), {}).has_value());

    sign_options options{
        .access_key_id = std::string(access_key), .secret = std::string(secret), .now = example_time()};
    CHECK(presign("GET", "/test.txt", host, std::chrono::seconds(86400), options) == target);
}

TEST_CASE("sign_headers reproduces the AWS GET Object example's Authorization header")
{
    std::vector<header_view> headers{{"Host", host}, {"Range", "bytes=0-9"}};
    sign_options options{.access_key_id = std::string(access_key),
                         .secret = std::string(secret),
                         .now = example_time(),
                         .payload_hash = std::string(empty_payload_hash)};
    auto added = sign_headers("GET", "/test.txt", headers, options);
    REQUIRE(added.size() == 3);
    CHECK(added[0] == std::pair<std::string, std::string>{"x-amz-date", "20130524T000000Z"});
    CHECK(added[1] ==
          std::pair<std::string, std::string>{"x-amz-content-sha256", std::string(empty_payload_hash)});
    CHECK(added[2].first == "authorization");
    CHECK(added[2].second ==
          "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
          "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
          "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}
