/// \file
/// Fuzzes SigV4 request parsing (src/auth/sigv4_parse.cpp): the Authorization header and the presigned
/// query, plus canonicalization and verification of whatever parses.
///
/// Input: the first line is the request target, each further line one header "name:value" (a line without
/// ':' is a header with an empty value). Invariants:
/// - what `parse` accepts is well-formed: host signed, signed header names lower-case and distinct, a
///   64-digit lower-case hex signature, a presigned expiry within 1..604800 s;
/// - canonicalization and `verify` are total on accepted requests;
/// - signing round trips: a request `sign_headers` (or `presign`) signed, with the fuzzed target and
///   headers, parses back and verifies with the same secret.

#include "auth/sigv4.hpp"

#include "check.hpp"
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

bool lower_hex64(std::string_view s)
{
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

void check_accepted(const request_view& req, const parsed_auth& auth)
{
    FUZZ_CHECK(lower_hex64(auth.signature));
    FUZZ_CHECK(std::find(auth.signed_headers.begin(), auth.signed_headers.end(), "host") !=
               auth.signed_headers.end());
    for (std::size_t i = 0; i < auth.signed_headers.size(); ++i) {
        const auto& name = auth.signed_headers[i];
        FUZZ_CHECK(!name.empty());
        FUZZ_CHECK(std::none_of(name.begin(), name.end(), [](char c) { return c >= 'A' && c <= 'Z'; }));
        FUZZ_CHECK(std::count(auth.signed_headers.begin(), auth.signed_headers.end(), name) == 1);
    }
    if (auth.presigned) {
        FUZZ_CHECK(auth.expires.count() >= 1 && auth.expires <= max_presigned_expiry);
        FUZZ_CHECK(auth.mode != payload_mode::streaming_signed &&
                   auth.mode != payload_mode::streaming_signed_trailer);
    }
    auto creq = canonical_request(req, auth);
    auto sts = string_to_sign(auth, creq);
    (void)signing_key(secret, auth.scope);
    // Whatever the scope, the time or the signature, verification answers (almost surely with an error).
    // `now` is a real clock reading, as in depotd: the request's dates are the attacker's.
    const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1795651200)); // 2026-11-26
    (void)verify(auth, req, secret, now, verify_options{.region = "us-east-1"});
    (void)sts;
}

/// Header names the round trip may use: tokens that cannot disturb the ';'-separated signed header list.
bool plain_name(std::string_view name)
{
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    });
}

std::string lower(std::string_view s)
{
    std::string out(s);
    for (auto& c : out)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return out;
}

/// True when the (decoded) query already holds a parameter of either authentication mechanism.
bool has_auth_params(std::string_view target)
{
    auto q = target.find('?');
    if (q == std::string_view::npos)
        return false;
    auto params = parse_query(target.substr(q + 1));
    if (!params)
        return true;
    for (const auto& [name, value] : *params)
        if (name.starts_with("X-Amz-") || name == "AWSAccessKeyId" || name == "Signature")
            return true;
    return false;
}

void round_trip(std::string_view target, const std::vector<header_view>& fuzzed)
{
    auto q = target.find('?');
    if (!uri_decode(target.substr(0, q)) || has_auth_params(target))
        return;
    std::vector<header_view> headers;
    bool host = false;
    for (const auto& h : fuzzed) {
        auto name = lower(h.name);
        if (!plain_name(h.name) || name == "authorization" || name == "x-amz-date" ||
            name == "x-amz-content-sha256" || name == "date" ||
            h.value.find_first_of("\r\n") != std::string_view::npos)
            continue;
        host = host || name == "host";
        headers.push_back(h);
    }
    if (!host)
        headers.push_back({"Host", "bucket.example.com"});
    const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1369353600)); // 2013-05-24
    sign_options options{.access_key_id = "AKIDEXAMPLE", .secret = std::string(secret), .now = now};

    auto added = sign_headers("PUT", target, headers, options);
    auto signed_req = headers;
    for (const auto& [name, value] : added)
        signed_req.push_back({name, value});
    request_view req{"PUT", target, signed_req};
    auto parsed = parse(req);
    FUZZ_CHECK(parsed && *parsed);
    FUZZ_CHECK(verify(**parsed, req, secret, now, verify_options{.region = "us-east-1"}));

    std::string_view host_value = "bucket.example.com";
    for (const auto& h : headers)
        if (lower(h.name) == "host") {
            host_value = h.value;
            break;
        }
    auto url = presign("GET", target, host_value, std::chrono::seconds(3600), options);
    const header_view host_header[] = {{"host", host_value}};
    request_view preq{"GET", url, host_header};
    auto pre = parse(preq);
    FUZZ_CHECK(pre && *pre && (*pre)->presigned);
    FUZZ_CHECK(verify(**pre, preq, secret, now, verify_options{.region = "us-east-1"}));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::vector<header_view> headers;
    const std::string_view target =
        fuzz::split_signed_request(std::string_view(reinterpret_cast<const char*>(data), size), headers);
    request_view req{"GET", target, headers};
    auto parsed = parse(req);
    if (parsed && *parsed)
        check_accepted(req, **parsed);
    round_trip(target, headers);
    return 0;
}
