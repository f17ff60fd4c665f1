#include "s3/cors.hpp"

#include <doctest/doctest.h>

using namespace depot;
using namespace depot::s3;

namespace {

const char* two_rules = R"(<CORSConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <CORSRule>
    <ID>app</ID>
    <AllowedOrigin>https://app.example.com</AllowedOrigin>
    <AllowedOrigin>https://*.preview.example.com</AllowedOrigin>
    <AllowedMethod>GET</AllowedMethod>
    <AllowedMethod>PUT</AllowedMethod>
    <AllowedHeader>Content-*</AllowedHeader>
    <AllowedHeader>x-amz-date</AllowedHeader>
    <ExposeHeader>ETag</ExposeHeader>
    <MaxAgeSeconds>600</MaxAgeSeconds>
  </CORSRule>
  <CORSRule>
    <AllowedOrigin>*</AllowedOrigin>
    <AllowedMethod>HEAD</AllowedMethod>
  </CORSRule>
</CORSConfiguration>)";

errc code_of(std::string_view body)
{
    auto r = parse_cors_configuration(body);
    REQUIRE_FALSE(r);
    return r.error().code;
}

std::string rule(std::string_view inner)
{
    return "<CORSConfiguration><CORSRule>" + std::string(inner) + "</CORSRule></CORSConfiguration>";
}

} // namespace

TEST_CASE("a CORS configuration parses, and serializes to what parses the same")
{
    auto config = parse_cors_configuration(two_rules);
    REQUIRE(config);
    REQUIRE(config->rules.size() == 2);
    const auto& first = config->rules[0];
    CHECK(first.id == "app");
    CHECK(first.allowed_methods == std::vector<std::string>{"GET", "PUT"});
    CHECK(first.allowed_origins.size() == 2);
    CHECK(first.expose_headers == std::vector<std::string>{"ETag"});
    CHECK(first.max_age_seconds == 600);
    const auto xml = cors_configuration_xml(*config);
    auto again = parse_cors_configuration(xml);
    REQUIRE(again);
    CHECK(cors_configuration_xml(*again) == xml);
    CHECK(xml.find("<AllowedOrigin>https://*.preview.example.com</AllowedOrigin>") != std::string::npos);
}

TEST_CASE("CORS configurations S3 refuses are refused with S3's codes")
{
    CHECK(code_of("<CORSConfiguration/>") == errc::malformed_xml);
    CHECK(code_of("<CORSConfiguration><CORSRule></CORSRule>") == errc::malformed_xml);
    CHECK(code_of(rule("<AllowedMethod>GET</AllowedMethod>")) == errc::malformed_xml); // no origin
    CHECK(code_of(rule("<AllowedOrigin>*</AllowedOrigin>")) == errc::malformed_xml);   // no method
    CHECK(code_of(rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod>")) ==
          errc::invalid_request);
    CHECK(code_of(rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>get</AllowedMethod>")) ==
          errc::invalid_request);
    CHECK(code_of(
              rule("<AllowedOrigin>https://*.*.example</AllowedOrigin><AllowedMethod>GET</AllowedMethod>")) ==
          errc::invalid_request);
    CHECK(code_of(rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"
                       "<AllowedHeader>a*b*</AllowedHeader>")) == errc::invalid_request);
    CHECK(code_of(rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"
                       "<MaxAgeSeconds>-1</MaxAgeSeconds>")) == errc::malformed_xml);
    std::string many = "<CORSConfiguration>";
    for (int i = 0; i < 101; ++i)
        many += "<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>";
    CHECK(code_of(many + "</CORSConfiguration>") == errc::malformed_xml);
}

TEST_CASE("nothing that could split a response header enters a CORS configuration")
{
    // The attacker's configuration: an origin or header that would end the header line when echoed.
    CHECK(code_of(rule("<AllowedOrigin>https://a.example&#13;&#10;Set-Cookie: x=1</AllowedOrigin>"
                       "<AllowedMethod>GET</AllowedMethod>")) == errc::invalid_request);
    CHECK(code_of(rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"
                       "<AllowedHeader>x&#10;y</AllowedHeader>")) == errc::invalid_request);
    CHECK(code_of(rule("<AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"
                       "<ExposeHeader>ETag, x</ExposeHeader>")) == errc::invalid_request);
    CHECK(code_of(rule("<AllowedOrigin>https://caf\xC3\xA9.example</AllowedOrigin><AllowedMethod>GET</"
                       "AllowedMethod>")) == errc::invalid_request);
}

TEST_CASE("wildcards match one run of characters; header names fold case")
{
    CHECK(cors_wildcard_match("*", "", false));
    CHECK(cors_wildcard_match("https://*.example.com", "https://a.b.example.com", false));
    CHECK_FALSE(cors_wildcard_match("https://*.example.com", "https://example.com", false));
    CHECK_FALSE(cors_wildcard_match("https://*.example.com", "http://a.example.com", false));
    CHECK(cors_wildcard_match("Content-*", "content-type", true));
    CHECK_FALSE(cors_wildcard_match("Content-*", "content-type", false));
    CHECK_FALSE(cors_wildcard_match("ab*ba", "aba", false)); // head and tail may not overlap
}

TEST_CASE("the first rule allowing origin, method and every requested header answers")
{
    auto config = parse_cors_configuration(two_rules);
    REQUIRE(config);
    const auto* r = find_cors_rule(*config, "https://app.example.com", "PUT", "content-type, X-Amz-Date");
    REQUIRE(r);
    CHECK(r->id == "app");
    CHECK(find_cors_rule(*config, "https://x.preview.example.com", "GET", "") == r);
    CHECK(find_cors_rule(*config, "https://app.example.com", "DELETE", "") == nullptr);
    CHECK(find_cors_rule(*config, "https://app.example.com", "PUT", "authorization") == nullptr);
    CHECK(find_cors_rule(*config, "https://evil.example", "GET", "") == nullptr);
    const auto* any = find_cors_rule(*config, "https://evil.example", "HEAD", "");
    REQUIRE(any);
    CHECK(any != r);
    // What would be echoed must be echoable.
    CHECK(find_cors_rule(*config, "https://evil.example\t", "HEAD", "") == nullptr);
    CHECK(find_cors_rule(*config, "https://app.example.com", "PUT", "content-type\x01") == nullptr);

    const auto pre = cors_preflight_headers(*r, "https://app.example.com", "Content-Type, x-amz-date");
    const auto value = [&](std::string_view name) {
        for (const auto& [n, v] : pre)
            if (n == name)
                return v;
        return std::string("(absent)");
    };
    CHECK(value("Access-Control-Allow-Origin") == "https://app.example.com");
    CHECK(value("Access-Control-Allow-Methods") == "GET, PUT");
    CHECK(value("Access-Control-Allow-Headers") == "content-type, x-amz-date");
    CHECK(value("Access-Control-Allow-Credentials") == "true");
    CHECK(value("Access-Control-Expose-Headers") == "ETag");
    CHECK(value("Access-Control-Max-Age") == "600");

    const auto open = cors_response_headers(*any, "https://evil.example");
    CHECK(open.front() == cors_header{"Access-Control-Allow-Origin", "*"});
    for (const auto& [n, v] : open)
        CHECK(n != "Access-Control-Allow-Credentials"); // never with '*'
}
