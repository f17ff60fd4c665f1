// Which surface serves a request (server/pipeline.hpp): decided by its credentials and host before the
// shape of its path, so that no valid S3 request is answered by the Hub API (issue 34 item 14).
#include "server/pipeline.hpp"

#include <doctest/doctest.h>
#include <optional>
#include <string>

using namespace depot::server;

namespace {

surface of(std::string_view method, std::string_view target,
           std::optional<std::string_view> authorization = {}, bool vhost = false)
{
    const auto q = target.find('?');
    const std::string_view path = target.substr(0, q);
    const std::string_view query = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
    return choose_surface(
        {.method = method,
         .path = path,
         .credentials = credential_of(authorization.has_value(), authorization.value_or(""), query),
         .virtual_hosted = vhost});
}

} // namespace

TEST_CASE("credentials are told apart from the header and the query alone")
{
    CHECK(credential_of(false, "", "") == credential_kind::none);
    CHECK(credential_of(false, "", "prefix=a") == credential_kind::none);
    CHECK(credential_of(true, "Bearer dpt_x", "") == credential_kind::bearer);
    CHECK(credential_of(true, "bearer hf_dpt_x", "") == credential_kind::bearer);
    CHECK(credential_of(true, "AWS4-HMAC-SHA256 Credential=a/b", "") == credential_kind::sigv4_header);
    CHECK(credential_of(true, "AWS AKID:sig", "") == credential_kind::sigv2_header);
    CHECK(credential_of(true, "Basic x", "") == credential_kind::other_header);
    CHECK(credential_of(false, "", "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=a") ==
          credential_kind::sigv4_query);
    CHECK(credential_of(false, "", "x-amz-signature=a") == credential_kind::sigv4_query);
    CHECK(credential_of(false, "", "AWSAccessKeyId=A&Expires=1&Signature=s") == credential_kind::sigv2_query);
    CHECK(credential_of(false, "", "Signature=s") == credential_kind::sigv2_query);
    // A value that merely mentions X-Amz- is not a presigned query (the old test searched the whole query).
    CHECK(credential_of(true, "Bearer t", "q=X-Amz-Signature") == credential_kind::bearer);
    // A presigned query wins over a header: S3's parsers refuse the pair.
    CHECK(credential_of(true, "Bearer t", "AWSAccessKeyId=A") == credential_kind::sigv2_query);
}

TEST_CASE("an S3 request whose key looks like a Hub path is S3's (issue 34 item 14)")
{
    const std::string_view key = "/team-bucket/model/resolve/main/file";
    // The cases the review found: presigned SigV2 and SigV4, header-signed, virtual-hosted.
    CHECK(of("GET", std::string(key) + "?AWSAccessKeyId=A&Expires=1&Signature=s") == surface::s3);
    CHECK(of("GET", std::string(key) + "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=a") == surface::s3);
    CHECK(of("GET", key, "AWS AKID:sig") == surface::s3);
    CHECK(of("HEAD", key, "AWS4-HMAC-SHA256 Credential=a") == surface::s3);
    CHECK(of("GET", "/model/resolve/main/file", std::nullopt, true) == surface::s3);
    CHECK(of("GET", "/api/models/team/model?AWSAccessKeyId=A&Signature=s&Expires=1") == surface::s3);
    CHECK(of("POST", "/api/models/team/model/paths-info/main", "AWS4-HMAC-SHA256 Credential=a") ==
          surface::s3);
    // Unsigned (a public grant): the dispatcher asks whether the first segment is a bucket.
    CHECK(of("GET", key) == surface::hub_unless_bucket);
    CHECK(of("HEAD", "/api/models/team/model") == surface::hub_unless_bucket);
    // Hub clients: a bearer token, which S3 never accepts.
    CHECK(of("GET", key, "Bearer hf_dpt_x") == surface::hub);
    CHECK(of("HEAD", key, "Bearer hf_dpt_x") == surface::hub);
    CHECK(of("GET", "/api/models/team/model", "Bearer hf_dpt_x") == surface::hub);
    CHECK(of("POST", "/api/models/team/model/paths-info/main", "Bearer hf_dpt_x") == surface::hub);
    // Not Hub-shaped: S3, whatever the credentials.
    CHECK(of("GET", "/b/model/resolve", "Bearer t") == surface::s3);
    CHECK(of("POST", key, "Bearer t") == surface::s3);
    CHECK(of("PUT", key, "Bearer t") == surface::s3);
    CHECK(of("DELETE", "/api/models/team/model") == surface::s3);
    CHECK(of("GET", "/b/k") == surface::s3);
    // The REST API, with any of its credentials.
    CHECK(of("GET", "/api/v1/whoami", "Bearer t") == surface::rest);
    CHECK(of("GET", "/api/v1/whoami", "AWS4-HMAC-SHA256 Credential=a") == surface::rest);
    CHECK(of("GET", "/api/v1") == surface::rest);
    // An attacker's finding: a virtual-hosted S3 request for a key under api/ went to the REST API, so a
    // presigned URL for such a key made REST calls as its signer. Host names the bucket: S3's.
    CHECK(of("PUT", "/api/v1/teams/t/members/m?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=a",
             std::nullopt, true) == surface::s3);
    CHECK(of("GET", "/api/v1/keys", "AWS4-HMAC-SHA256 Credential=a", true) == surface::s3);
    CHECK(of("GET", "/api/v1/whoami", "Bearer t", true) == surface::s3);
    CHECK(of("GET", "/api/models/team/model", "Bearer hf_dpt_x", true) == surface::s3);
}
