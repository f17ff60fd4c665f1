/// \file
/// Client-side SigV4: signing with an Authorization header and presigning URLs. Used by tests, tools/bench
/// and depotctl; shares the canonicalization code with the server side so both agree by construction, and
/// is checked against AWS's published examples independently.

#include "common/http_date.hpp"
#include "auth/sigv4.hpp"
#include "auth/sigv4_detail.hpp"
#include "common/uri.hpp"

#include <algorithm>
#include <stdexcept>

namespace depot::auth {
namespace {

credential_scope scope_of(const sign_options& options, std::string_view amz_date)
{
    return credential_scope{std::string(amz_date.substr(0, 8)), options.region, options.service};
}

std::string sign(const request_view& req, const parsed_auth& auth, std::string_view secret)
{
    auto creq = canonical_request(req, auth);
    return signature(signing_key(secret, auth.scope), string_to_sign(auth, creq));
}

} // namespace

std::vector<std::pair<std::string, std::string>> sign_headers(std::string_view method,
                                                              std::string_view raw_target,
                                                              std::span<const header_view> headers,
                                                              const sign_options& options)
{
    parsed_auth auth;
    auth.amz_date = format_amz_date(options.now);
    auth.request_time = options.now;
    auth.scope = scope_of(options, auth.amz_date);
    auth.payload_hash = options.payload_hash;
    auth.access_key_id = options.access_key_id;

    std::vector<header_view> all;
    all.reserve(headers.size() + 2);
    for (const auto& h : headers) {
        auto name = detail::to_lower(h.name);
        if (name == "x-amz-date" || name == "x-amz-content-sha256" || name == "authorization")
            continue;
        all.push_back(h);
        if (std::find(auth.signed_headers.begin(), auth.signed_headers.end(), name) ==
            auth.signed_headers.end())
            auth.signed_headers.push_back(std::move(name));
    }
    if (std::find(auth.signed_headers.begin(), auth.signed_headers.end(), "host") ==
        auth.signed_headers.end())
        throw std::invalid_argument("sign_headers: the headers must include host");
    all.push_back({"x-amz-date", auth.amz_date});
    all.push_back({"x-amz-content-sha256", auth.payload_hash});
    auth.signed_headers.push_back("x-amz-content-sha256");
    auth.signed_headers.push_back("x-amz-date");
    std::sort(auth.signed_headers.begin(), auth.signed_headers.end());

    auto sig = sign(request_view{method, raw_target, all}, auth, options.secret);
    std::string authorization = "AWS4-HMAC-SHA256 Credential=" + options.access_key_id + '/' +
                                scope_string(auth.scope) + ", SignedHeaders=";
    for (std::size_t i = 0; i < auth.signed_headers.size(); ++i) {
        if (i != 0)
            authorization.push_back(';');
        authorization += auth.signed_headers[i];
    }
    authorization += ", Signature=" + sig;
    return {{"x-amz-date", auth.amz_date},
            {"x-amz-content-sha256", auth.payload_hash},
            {"authorization", std::move(authorization)}};
}

std::string presign(std::string_view method, std::string_view raw_target, std::string_view host,
                    std::chrono::seconds expires, const sign_options& options)
{
    if (expires.count() < 1 || expires > max_presigned_expiry)
        throw std::invalid_argument("presign: expires must be within 1..604800 seconds");
    parsed_auth auth;
    auth.presigned = true;
    auth.amz_date = format_amz_date(options.now);
    auth.request_time = options.now;
    auth.expires = expires;
    auth.scope = scope_of(options, auth.amz_date);
    auth.access_key_id = options.access_key_id;
    auth.signed_headers = {"host"};
    auth.payload_hash = "UNSIGNED-PAYLOAD";

    auto [path, query] = detail::split_target(raw_target);
    std::string target(path);
    target.push_back('?');
    if (!query.empty()) {
        target += query;
        target.push_back('&');
    }
    target += "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=";
    target += uri_encode(options.access_key_id + '/' + scope_string(auth.scope));
    target += "&X-Amz-Date=" + auth.amz_date;
    target += "&X-Amz-Expires=" + std::to_string(expires.count());
    target += "&X-Amz-SignedHeaders=host";

    const header_view host_header[] = {{"host", host}};
    auto sig = sign(request_view{method, target, host_header}, auth, options.secret);
    target += "&X-Amz-Signature=" + sig;
    return target;
}

} // namespace depot::auth
