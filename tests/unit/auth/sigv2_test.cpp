// Signature Version 2: the string to sign and the signatures of AWS's worked examples ("Signing and
// authenticating REST requests", with the documented example credentials), then parsing and verification.
#include "auth/sigv2.hpp"
#include "common/http_date.hpp"

#include <algorithm>
#include <doctest/doctest.h>
#include <string>
#include <vector>

using namespace depot;
using namespace depot::auth;
using namespace std::chrono_literals;

namespace {

constexpr std::string_view aws_secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

struct v2_request
{
    std::string method = "GET";
    std::string target = "/bucket/key";
    std::vector<std::pair<std::string, std::string>> headers;
    std::vector<header_view> views;

    request_view view()
    {
        views.clear();
        for (const auto& [n, v] : headers)
            views.push_back({n, v});
        return {method, target, views};
    }
};

sigv2::parsed_auth parsed(v2_request& r)
{
    auto p = sigv2::parse(r.view());
    REQUIRE(p.has_value());
    return *p;
}

errc parse_error(v2_request& r)
{
    auto p = sigv2::parse(r.view());
    REQUIRE_FALSE(p.has_value());
    return p.error().code;
}

const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1795651200)); // 2026-11-26

} // namespace

TEST_CASE("AWS's SigV2 examples: string to sign and signature")
{
    struct example
    {
        std::string method, target, vhost;
        std::vector<std::pair<std::string, std::string>> headers;
        std::string sts, signature;
    };
    const example examples[] = {
        {"GET",
         "/photos/puppy.jpg",
         "awsexamplebucket1",
         {{"Host", "awsexamplebucket1.us-west-1.s3.amazonaws.com"},
          {"Date", "Tue, 27 Mar 2007 19:36:42 +0000"}},
         "GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/awsexamplebucket1/photos/puppy.jpg",
         "qgk2+6Sv9/oM7G3qLEjTH1a1l1g="},
        {"PUT",
         "/photos/puppy.jpg",
         "awsexamplebucket1",
         {{"Content-Type", "image/jpeg"},
          {"Content-Length", "94328"},
          {"Host", "awsexamplebucket1.s3.us-west-1.amazonaws.com"},
          {"Date", "Tue, 27 Mar 2007 21:15:45 +0000"}},
         "PUT\n\nimage/jpeg\nTue, 27 Mar 2007 21:15:45 +0000\n/awsexamplebucket1/photos/puppy.jpg",
         "iqRzw+ileNPu1fhspnRs8nOjjIA="},
        // A listing: the query parameters are not sub-resources, the bucket root keeps its '/'.
        {"GET",
         "/?prefix=photos&max-keys=50&marker=puppy",
         "awsexamplebucket1",
         {{"User-Agent", "Mozilla/5.0"},
          {"Host", "awsexamplebucket1.s3.us-west-1.amazonaws.com"},
          {"Date", "Tue, 27 Mar 2007 19:42:41 +0000"}},
         "GET\n\n\nTue, 27 Mar 2007 19:42:41 +0000\n/awsexamplebucket1/",
         "m0WP8eCtspQl5Ahe6L1SozdX9YA="},
        {"GET",
         "/?acl",
         "awsexamplebucket1",
         {{"Host", "awsexamplebucket1.s3.us-west-1.amazonaws.com"},
          {"Date", "Tue, 27 Mar 2007 19:44:46 +0000"}},
         "GET\n\n\nTue, 27 Mar 2007 19:44:46 +0000\n/awsexamplebucket1/?acl",
         "82ZHiFIjc+WbcwFKGUVEQspPn+0="},
    };
    for (const auto& e : examples) {
        CAPTURE(e.sts);
        v2_request r{e.method, e.target, e.headers};
        r.headers.emplace_back("Authorization", "AWS AKIAIOSFODNN7EXAMPLE:" + e.signature);
        auto a = parsed(r);
        CHECK(a.access_key_id == "AKIAIOSFODNN7EXAMPLE");
        CHECK(sigv2::string_to_sign(r.view(), a, e.vhost) == e.sts);
        CHECK(sigv2::signature(aws_secret, e.sts) == e.signature);
        // The examples are from 2007: only the clock stands between them and success.
        auto then = *parse_http_date(e.headers.back().second.substr(0, 25) + " GMT");
        CHECK(sigv2::verify(a, r.view(), e.vhost, aws_secret, then, {}).has_value());
        CHECK(sigv2::verify(a, r.view(), e.vhost, aws_secret, now, {}).error().code ==
              errc::request_time_too_skewed);
        CHECK(sigv2::verify(a, r.view(), e.vhost, "wrong", then, {}).error().code ==
              errc::signature_does_not_match);
    }
}

TEST_CASE("AWS's DELETE example with x-amz-date, and the documented rule, both verify")
{
    // Path style; x-amz-date wins over Date.
    v2_request r{"DELETE",
                 "/awsexamplebucket1/photos/puppy.jpg",
                 {{"User-Agent", "dotnet"},
                  {"Host", "s3.us-west-1.amazonaws.com"},
                  {"Date", "Tue, 27 Mar 2007 21:20:27 +0000"},
                  {"x-amz-date", "Tue, 27 Mar 2007 21:20:26 +0000"},
                  {"Authorization", "AWS AKIAIOSFODNN7EXAMPLE:XbyTlbQdu9Xw5o8P4iMwPktxQd8="}}};
    auto a = parsed(r);
    const auto then = *parse_http_date("Tue, 27 Mar 2007 21:20:26 GMT");
    CHECK(a.request_time == then);
    // The rule: an empty Date line, x-amz-date among the x-amz-* lines.
    const std::string rule = "DELETE\n\n\n\nx-amz-date:Tue, 27 Mar 2007 21:20:26 +0000\n"
                             "/awsexamplebucket1/photos/puppy.jpg";
    CHECK(sigv2::string_to_sign(r.view(), a, "") == rule);
    // The example's own signature (x-amz-date on the Date line) verifies...
    CHECK(sigv2::verify(a, r.view(), "", aws_secret, then, {}).has_value());
    // ...and so does the rule's (s3cmd's form).
    r.headers.back().second = "AWS AKIAIOSFODNN7EXAMPLE:" + sigv2::signature(aws_secret, rule);
    a = parsed(r);
    CHECK(sigv2::verify(a, r.view(), "", aws_secret, then, {}).has_value());
    // Another x-amz-date value breaks both.
    r.headers[3].second = "Tue, 27 Mar 2007 21:20:25 +0000";
    a = parsed(r);
    CHECK(sigv2::verify(a, r.view(), "", aws_secret, then, {}).error().code ==
          errc::signature_does_not_match);
}

TEST_CASE("AWS's query string example")
{
    v2_request r{
        "GET",
        "/photos/puppy.jpg?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D&"
        "Expires=1175139620",
        {{"Host", "johnsmith.s3.amazonaws.com"}}};
    auto a = parsed(r);
    CHECK(a.presigned);
    CHECK(a.expires_epoch == 1175139620);
    CHECK(sigv2::string_to_sign(r.view(), a, "johnsmith") ==
          "GET\n\n\n1175139620\n/johnsmith/photos/puppy.jpg");
    const auto before = std::chrono::system_clock::time_point(std::chrono::seconds(1175139000));
    CHECK(sigv2::verify(a, r.view(), "johnsmith", aws_secret, before, {}).has_value());
    const auto after = std::chrono::system_clock::time_point(std::chrono::seconds(1175139621));
    auto expired = sigv2::verify(a, r.view(), "johnsmith", aws_secret, after, {});
    CHECK(expired.error().code == errc::expired_presigned_request);
    CHECK(expired.error().message == "Request has expired");
    // Longer than SigV4's seven days (plus the clock skew allowance) from now: refused.
    const auto long_before = std::chrono::system_clock::time_point(std::chrono::seconds(1175139620 - 700000));
    CHECK(sigv2::verify(a, r.view(), "johnsmith", aws_secret, long_before, {}).error().code ==
          errc::authorization_query_parameters_error);
}

TEST_CASE("every x-amz-* header is in the string to sign; sub-resources are sorted, others left out")
{
    v2_request r{"PUT",
                 "/b/k?uploadId=a%20b&partNumber=2&x-id=UploadPart",
                 {{"Date", "Thu, 26 Nov 2026 00:00:00 GMT"},
                  {"X-Amz-Meta-B", " two "},
                  {"x-amz-acl", "private"},
                  {"x-amz-meta-b", "three"},
                  {"Content-MD5", "1B2M2Y8AsgTpgAmY7PhCfg=="}}};
    r.headers.emplace_back("Authorization",
                           sigv2::authorization(r.method, r.target, r.view().headers, "AK", "s"));
    auto a = parsed(r);
    CHECK(sigv2::string_to_sign(r.view(), a, "") ==
          "PUT\n1B2M2Y8AsgTpgAmY7PhCfg==\n\nThu, 26 Nov 2026 00:00:00 GMT\n"
          "x-amz-acl:private\nx-amz-meta-b:two,three\n/b/k?partNumber=2&uploadId=a b");
    CHECK(sigv2::verify(a, r.view(), "", "s", now, {}).has_value());
    // Adding, changing or removing any x-amz-* header breaks the signature: none can ride along unsigned.
    r.headers.emplace_back("x-amz-copy-source", "/other/secret");
    CHECK(sigv2::verify(parsed(r), r.view(), "", "s", now, {}).error().code ==
          errc::signature_does_not_match);
    r.headers.pop_back();
    r.headers[2].second = "public-read";
    CHECK(sigv2::verify(parsed(r), r.view(), "", "s", now, {}).error().code ==
          errc::signature_does_not_match);

    auto names = sigv2::subresources();
    CHECK(std::is_sorted(names.begin(), names.end()));
}

TEST_CASE("a presigned URL made by presign verifies; tampering does not")
{
    auto url = sigv2::presign("GET", "/bucket/a%20b?versionId=3", "AKID", "secret", now + 1h);
    v2_request r{"GET", url, {{"Host", "depot"}}};
    auto a = parsed(r);
    CHECK(sigv2::verify(a, r.view(), "", "secret", now, {}).has_value());
    v2_request other{"GET", url, {{"Host", "depot"}}};
    other.target.replace(other.target.find("versionId=3"), 11, "versionId=4");
    CHECK(sigv2::verify(parsed(other), other.view(), "", "secret", now, {}).error().code ==
          errc::signature_does_not_match);
    v2_request put{"PUT", url, {{"Host", "depot"}}};
    CHECK(sigv2::verify(parsed(put), put.view(), "", "secret", now, {}).error().code ==
          errc::signature_does_not_match);
    // An x-amz-* header added to a presigned request is signed too, so it breaks the URL.
    v2_request extra{"GET", url, {{"Host", "depot"}, {"x-amz-acl", "public-read"}}};
    CHECK(sigv2::verify(parsed(extra), extra.view(), "", "secret", now, {}).error().code ==
          errc::signature_does_not_match);
}

TEST_CASE("a presigned URL carries no query parameter its signature does not cover (issue 34 item 10)")
{
    // The attacker's edit: a presigned listing of prefix=public/ changed to prefix=secret/. SigV2 signs only
    // the sub-resources, so the signature still verifies; the parameter itself is refused.
    auto url = sigv2::presign("GET", "/bucket?prefix=public/", "AKID", "secret", now + 1h);
    v2_request edited{"GET", url, {{"Host", "depot"}}};
    edited.target.replace(edited.target.find("prefix=public/"), 14, "prefix=secret/");
    auto p = sigv2::parse(edited.view());
    REQUIRE_FALSE(p.has_value());
    CHECK(p.error().code == errc::authorization_query_parameters_error);
    CHECK(p.error().message.find("'prefix'") != std::string::npos);
    // Unedited too: whatever its value, an unsigned parameter is never what the signer decided.
    v2_request unedited{"GET", url, {{"Host", "depot"}}};
    CHECK(parse_error(unedited) == errc::authorization_query_parameters_error);
    // Added to a URL that had none, and every listing parameter (list-type turns V1 into V2).
    const auto plain = sigv2::presign("GET", "/bucket/key", "AKID", "secret", now + 1h);
    for (std::string extra :
         {"prefix=secret/", "delimiter=/", "marker=a", "max-keys=1", "list-type=2", "continuation-token=x",
          "start-after=a", "key-marker=a", "versionid=1", "VersionId=1", "x=1", "=1", "fetch-owner=true"}) {
        CAPTURE(extra);
        v2_request r{"GET", plain + "&" + extra, {}};
        CHECK(parse_error(r) == errc::authorization_query_parameters_error);
    }
    // What the string to sign covers stays accepted: sub-resources, x-amz-* and the content lines (as
    // boto3 moves them into the query), and the signature still checks them.
    for (std::string covered :
         {"/bucket/key?versionId=3", "/bucket/key?acl", "/bucket/key?x-amz-acl=private",
          "/bucket/key?X-Amz-Meta-A=1", "/bucket/key?content-type=text/plain", "/bucket/key?content-md5=abc",
          "/bucket/key?response-content-type=text/plain"}) {
        CAPTURE(covered);
        v2_request r{"GET", sigv2::presign("GET", covered, "AKID", "secret", now + 1h), {}};
        CHECK(sigv2::verify(parsed(r), r.view(), "", "secret", now, {}).has_value());
    }
    // A header of the same name is what is signed then: the parameter beside it may only repeat it (boto3
    // presigns Content-Type into the query, and the client sends the header too).
    v2_request shadowed{"GET",
                        sigv2::presign("GET", "/bucket/key?content-type=a", "AKID", "secret", now + 1h),
                        {{"Content-Type", "b"}}};
    CHECK(parse_error(shadowed) == errc::authorization_query_parameters_error);
    v2_request shadowed_amz{"GET",
                            sigv2::presign("GET", "/bucket/key?x-amz-acl=a", "AKID", "secret", now + 1h),
                            {{"x-amz-acl", "public-read"}}};
    CHECK(parse_error(shadowed_amz) == errc::authorization_query_parameters_error);
    v2_request repeated{"GET",
                        sigv2::presign("GET", "/bucket/key?content-type=a", "AKID", "secret", now + 1h),
                        {{"Content-Type", "a"}}};
    CHECK(sigv2::parse(repeated.view()).has_value());
    // Header authentication is unaffected (SECURITY.md: its query is unsigned, as its body is).
    v2_request header{"GET",
                      "/bucket?prefix=a",
                      {{"Date", "Thu, 26 Nov 2026 00:00:00 GMT"},
                       {"Authorization", "AWS AKID:qgk2+6Sv9/oM7G3qLEjTH1a1l1g="}}};
    CHECK(sigv2::parse(header.view()).has_value());
}

TEST_CASE("malformed SigV2 input is refused with S3's errors")
{
    for (std::string value : {"AWS", "AWS AKID", "AWS :c2lnbmF0dXJlc2lnbmF0dXJlMTI=", "AWS AKID:notbase64!",
                              "AWS AKID:c2ln", "AWS AK\x01ID:qgk2+6Sv9/oM7G3qLEjTH1a1l1g="}) {
        CAPTURE(value);
        v2_request r{"GET", "/b/k", {{"Date", "Thu, 26 Nov 2026 00:00:00 GMT"}, {"Authorization", value}}};
        CHECK(parse_error(r) == errc::invalid_argument);
    }
    v2_request no_date{"GET", "/b/k", {{"Authorization", "AWS AKID:qgk2+6Sv9/oM7G3qLEjTH1a1l1g="}}};
    CHECK(parse_error(no_date) == errc::access_denied);
    v2_request bad_date{
        "GET", "/b/k", {{"Date", "yesterday"}, {"Authorization", "AWS AKID:qgk2+6Sv9/oM7G3qLEjTH1a1l1g="}}};
    CHECK(parse_error(bad_date) == errc::access_denied);

    const std::string sig = "&Signature=qgk2%2B6Sv9/oM7G3qLEjTH1a1l1g%3D";
    for (std::string target : {"/b/k?AWSAccessKeyId=AKID" + sig, "/b/k?Expires=1" + sig,
                               std::string("/b/k?AWSAccessKeyId=AKID&Expires=1")}) {
        CAPTURE(target);
        v2_request r{"GET", target, {}};
        CHECK(parse_error(r) == errc::access_denied);
    }
    for (std::string expires : {"abc", "-5", "+5", "1e9", "", "99999999999999999999999", " 5"}) {
        CAPTURE(expires);
        v2_request r{"GET", "/b/k?AWSAccessKeyId=AKID&Expires=" + expires + sig, {}};
        auto p = sigv2::parse(r.view());
        REQUIRE_FALSE(p.has_value());
        CHECK(p.error().code == errc::access_denied);
        CHECK(p.error().message.starts_with("Invalid date (should be seconds since epoch)"));
    }
    v2_request twice{"GET", "/b/k?AWSAccessKeyId=AKID&AWSAccessKeyId=AKID2&Expires=1" + sig, {}};
    CHECK(parse_error(twice) == errc::authorization_query_parameters_error);
    v2_request short_sig{"GET", "/b/k?AWSAccessKeyId=AKID&Expires=1&Signature=c2ln", {}};
    CHECK(parse_error(short_sig) == errc::authorization_query_parameters_error);
    v2_request both{"GET",
                    "/b/k?AWSAccessKeyId=AKID&Expires=1" + sig,
                    {{"Authorization", "AWS AKID:qgk2+6Sv9/oM7G3qLEjTH1a1l1g="}}};
    CHECK(parse_error(both) == errc::invalid_argument);
    v2_request mixed{"GET",
                     "/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256",
                     {{"Authorization", "AWS AKID:qgk2+6Sv9/oM7G3qLEjTH1a1l1g="}}};
    CHECK(parse_error(mixed) == errc::invalid_argument);
    v2_request streaming{"PUT",
                         "/b/k",
                         {{"Date", "Thu, 26 Nov 2026 00:00:00 GMT"},
                          {"x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"},
                          {"Authorization", "AWS AKID:qgk2+6Sv9/oM7G3qLEjTH1a1l1g="}}};
    CHECK(parse_error(streaming) == errc::invalid_argument);

    v2_request v4{"GET", "/b/k", {{"Authorization", "AWS4-HMAC-SHA256 Credential=x"}}};
    CHECK_FALSE(sigv2::applies(v4.view()));
    v2_request anonymous{"GET", "/b/k?Expires=5", {}};
    CHECK_FALSE(sigv2::applies(anonymous.view()));
}

TEST_CASE("botocore's ListObjectsV2 resource (/bucket?list-type=2) verifies, and only for that listing")
{
    // The string botocore 1.43 signs for a path-style ListObjectsV2 (its model's request URI).
    const std::string date = "Thu, 26 Nov 2026 00:00:00 GMT";
    const auto signed_as = [&](std::string_view resource) {
        return "AWS AK:" + sigv2::signature("s", "GET\n\n\n" + date + "\n" + std::string(resource));
    };
    v2_request r{"GET", "/b?list-type=2&prefix=p%2F&encoding-type=url", {{"Date", date}}};
    r.headers.emplace_back("Authorization", signed_as("/b?list-type=2"));
    CHECK(sigv2::verify(parsed(r), r.view(), "", "s", now, {}).has_value());
    // A listing of another bucket, another operation (ListObjects, no list-type), another key: refused.
    for (std::string target : {"/c?list-type=2", "/b?prefix=p%2F", "/b/k?list-type=2", "/b?list-type=1"}) {
        v2_request other{"GET", target, {{"Date", date}, {"Authorization", signed_as("/b?list-type=2")}}};
        CHECK(sigv2::verify(parsed(other), other.view(), "", "s", now, {}).error().code ==
              errc::signature_does_not_match);
    }
    // Virtual-hosted: the bucket root's resource.
    v2_request vhost{
        "GET", "/?list-type=2", {{"Date", date}, {"Authorization", signed_as("/b/?list-type=2")}}};
    CHECK(sigv2::verify(parsed(vhost), vhost.view(), "b", "s", now, {}).has_value());
}
