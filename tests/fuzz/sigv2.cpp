/// \file
/// Fuzzes SigV2 request parsing (src/auth/sigv2.cpp): the `Authorization: AWS key:signature` header and the
/// presigned query (AWSAccessKeyId, Signature, Expires), plus the string to sign and verification of
/// whatever parses.
///
/// Input: the first line is the request target, each further line one header "name:value" (a line without
/// ':' is a header with an empty value). Invariants:
/// - what `parse` accepts is well-formed: a printable key id without ':', a 20-byte signature, a presigned
///   Expires of decimal digits only;
/// - every x-amz-* header of the request has its line in the string to sign (none can go unsigned);
/// - the string to sign and `verify` are total on accepted requests;
/// - signing round trips: a request `authorization` (or `presign`) signed, with the fuzzed target and
///   headers, parses back and verifies with the same secret, and fails with another one; a presigned URL
///   whose query holds a parameter its string to sign does not cover is refused
///   (AuthorizationQueryParametersError) instead.

#include "auth/sigv2.hpp"

#include "check.hpp"
#include "common/http_date.hpp"
#include "common/uri.hpp"
#include "signed_request.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace depot;
using namespace depot::auth;

constexpr std::string_view secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1795651200)); // 2026-11-26

std::string lower(std::string_view s)
{
    std::string out(s);
    for (auto& c : out)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return out;
}

void check_accepted(const request_view& req, const sigv2::parsed_auth& auth)
{
    FUZZ_CHECK(auth.signature.size() == 20);
    FUZZ_CHECK(!auth.access_key_id.empty());
    FUZZ_CHECK(std::all_of(auth.access_key_id.begin(), auth.access_key_id.end(), [](char c) {
        return static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7F && c != ':';
    }));
    if (auth.presigned)
        FUZZ_CHECK(!auth.expires_text.empty() &&
                   std::all_of(auth.expires_text.begin(), auth.expires_text.end(),
                               [](char c) { return c >= '0' && c <= '9'; }));
    for (std::string_view bucket : {std::string_view(), std::string_view("bucket")}) {
        auto sts = sigv2::string_to_sign(req, auth, bucket);
        for (const auto& h : req.headers) {
            auto name = lower(h.name);
            if (name.starts_with("x-amz-"))
                FUZZ_CHECK(sts.find("\n" + name + ":") != std::string::npos);
        }
        (void)sigv2::verify(auth, req, bucket, secret, now, {});
    }
}

bool plain_name(std::string_view name)
{
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    });
}

bool has_auth_params(std::string_view target)
{
    auto q = target.find('?');
    if (q == std::string_view::npos)
        return false;
    auto params = parse_query(target.substr(q + 1));
    if (!params)
        return true;
    for (const auto& [name, value] : *params)
        if (name == "X-Amz-Algorithm" || name == "AWSAccessKeyId" || name == "Signature" || name == "Expires")
            return true;
    return false;
}

/// Whether every query parameter of `target` is one a presigned URL's string to sign covers when the
/// request sends no headers: a sub-resource, an x-amz-* parameter, content-type or content-md5, or
/// encoding-type (which changes only how keys are spelled).
bool presignable(std::string_view target)
{
    auto q = target.find('?');
    if (q == std::string_view::npos)
        return true;
    auto params = parse_query(target.substr(q + 1));
    if (!params)
        return false;
    const auto subs = sigv2::subresources();
    for (const auto& [name, value] : *params) {
        if (name == "encoding-type" || name == "content-type" || name == "content-md5" ||
            lower(name).starts_with("x-amz-") || std::find(subs.begin(), subs.end(), name) != subs.end())
            continue;
        return false;
    }
    return true;
}

void round_trip(std::string_view target, const std::vector<header_view>& fuzzed)
{
    auto q = target.find('?');
    if (!uri_decode(target.substr(0, q)) || has_auth_params(target) ||
        (q != std::string_view::npos && !parse_query(target.substr(q + 1))))
        return;
    std::vector<header_view> headers;
    for (const auto& h : fuzzed) {
        auto name = lower(h.name);
        if (!plain_name(h.name) || name == "authorization" || name == "date" || name == "x-amz-date" ||
            name == "x-amz-content-sha256")
            continue;
        headers.push_back(h);
    }
    const std::string date = format_http_date(now);
    headers.push_back({"Date", date});
    const std::string value = sigv2::authorization("PUT", target, headers, "AKIDEXAMPLE", secret);
    headers.push_back({"Authorization", value});
    request_view req{"PUT", target, headers};
    FUZZ_CHECK(sigv2::applies(req));
    auto parsed = sigv2::parse(req);
    FUZZ_CHECK(parsed.has_value());
    FUZZ_CHECK(sigv2::verify(*parsed, req, "", secret, now, {}).has_value());
    FUZZ_CHECK(!sigv2::verify(*parsed, req, "", "another secret", now, {}).has_value());

    auto url = sigv2::presign("GET", target, "AKIDEXAMPLE", secret, now + std::chrono::hours(1));
    request_view preq{"GET", url, {}};
    auto pre = sigv2::parse(preq);
    if (!presignable(target)) {
        // A parameter the string to sign does not cover could be edited by whoever holds the URL.
        FUZZ_CHECK(!pre.has_value() && pre.error().code == errc::authorization_query_parameters_error);
        return;
    }
    FUZZ_CHECK(pre.has_value() && pre->presigned);
    FUZZ_CHECK(sigv2::verify(*pre, preq, "", secret, now, {}).has_value());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::vector<header_view> headers;
    const std::string_view target =
        fuzz::split_signed_request(std::string_view(reinterpret_cast<const char*>(data), size), headers);
    request_view req{"GET", target, headers};
    (void)sigv2::applies(req);
    auto parsed = sigv2::parse(req);
    if (parsed)
        check_accepted(req, *parsed);
    round_trip(target, headers);
    return 0;
}
