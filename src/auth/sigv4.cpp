#include "auth/sigv4.hpp"

#include "auth/sigv4_detail.hpp"
#include "common/hash.hpp"
#include "common/uri.hpp"

#include <algorithm>

namespace depot::auth {
namespace {

using detail::iequals;

/// S3 encodes the path once and never normalizes it: decode what was received, re-encode every byte but
/// the unreserved ones and '/'.
std::string canonical_uri(std::string_view path)
{
    if (path.empty())
        return "/";
    auto decoded = uri_decode(path);
    // `parse` rejects undecodable paths; encoding the raw bytes keeps this total for other callers.
    return uri_encode(decoded ? std::string_view(*decoded) : path, true);
}

std::string canonical_query(std::string_view query, bool presigned)
{
    auto pairs = parse_query(query);
    if (!pairs)
        return {};
    std::vector<std::pair<std::string, std::string>> encoded;
    encoded.reserve(pairs->size());
    for (const auto& [name, value] : *pairs) {
        if (presigned && name == "X-Amz-Signature")
            continue;
        encoded.emplace_back(uri_encode(name), uri_encode(value));
    }
    std::sort(encoded.begin(), encoded.end());
    std::string out;
    for (const auto& [name, value] : encoded) {
        if (!out.empty())
            out.push_back('&');
        out += name;
        out.push_back('=');
        out += value;
    }
    return out;
}

/// Trims the value and collapses every inner run of spaces and tabs into one space.
void append_trimmed(std::string& out, std::string_view value)
{
    value = detail::trim(value);
    bool in_blank = false;
    for (char c : value) {
        if (c == ' ' || c == '\t') {
            in_blank = true;
            continue;
        }
        if (in_blank)
            out.push_back(' ');
        in_blank = false;
        out.push_back(c);
    }
}

std::vector<std::string> sorted_names(const std::vector<std::string>& names)
{
    std::vector<std::string> out;
    out.reserve(names.size());
    for (const auto& n : names)
        out.push_back(detail::to_lower(n));
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

std::string scope_string(const credential_scope& scope)
{
    return scope.date + '/' + scope.region + '/' + scope.service + "/aws4_request";
}

std::string canonical_request(const request_view& req, const parsed_auth& auth)
{
    auto [path, query] = detail::split_target(req.raw_target);
    auto names = sorted_names(auth.signed_headers);

    std::string out;
    out.reserve(256 + req.raw_target.size());
    out += req.method;
    out.push_back('\n');
    out += canonical_uri(path);
    out.push_back('\n');
    out += canonical_query(query, auth.presigned);
    out.push_back('\n');
    for (const auto& name : names) {
        out += name;
        out.push_back(':');
        bool first = true;
        for (const auto& h : req.headers) {
            if (!iequals(h.name, name))
                continue;
            if (!first)
                out.push_back(',');
            first = false;
            append_trimmed(out, h.value);
        }
        out.push_back('\n');
    }
    out.push_back('\n');
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i != 0)
            out.push_back(';');
        out += names[i];
    }
    out.push_back('\n');
    out += auth.payload_hash;
    return out;
}

std::string string_to_sign(const parsed_auth& auth, std::string_view canonical_request)
{
    std::string out = "AWS4-HMAC-SHA256\n";
    out += auth.amz_date;
    out.push_back('\n');
    out += scope_string(auth.scope);
    out.push_back('\n');
    out += to_hex(sha256(canonical_request));
    return out;
}

std::string signing_key(std::string_view secret, const credential_scope& scope)
{
    std::string k = "AWS4";
    k += secret;
    k = hmac_sha256(k, scope.date);
    k = hmac_sha256(k, scope.region);
    k = hmac_sha256(k, scope.service);
    return hmac_sha256(k, "aws4_request");
}

std::string signature(std::string_view signing_key, std::string_view string_to_sign)
{
    return to_hex(hmac_sha256(signing_key, string_to_sign));
}

result<void> verify(const parsed_auth& auth, const request_view& req, std::string_view secret,
                    std::chrono::system_clock::time_point now, const verify_options& options)
{
    const errc scope_error =
        auth.presigned ? errc::authorization_query_parameters_error : errc::authorization_header_malformed;
    const std::string prefix = auth.presigned ? "Error parsing the X-Amz-Credential parameter; "
                                              : "The authorization header is malformed; ";
    if (!options.region.empty() && auth.scope.region != options.region)
        return make_error(scope_error, prefix + "the region '" + auth.scope.region +
                                           "' is wrong; expecting '" + options.region + "'");
    if (auth.scope.service != "s3")
        return make_error(scope_error, prefix + "incorrect service '" + auth.scope.service +
                                           "'. This endpoint belongs to 's3'.");
    if (auth.amz_date.compare(0, 8, auth.scope.date) != 0)
        return make_error(scope_error, prefix + "Invalid credential date '" + auth.scope.date +
                                           "'. Date is not the same as the request date '" +
                                           auth.amz_date.substr(0, 8) + "'.");

    if (auth.presigned) {
        if (auth.request_time > now + options.max_skew)
            return make_error(errc::request_time_too_skewed,
                              "X-Amz-Date " + auth.amz_date +
                                  " is in the future; the request is not valid yet.");
        if (now > auth.request_time + auth.expires)
            return make_error(errc::expired_presigned_request, "Request has expired");
    } else {
        // In whole seconds: the clock's 64-bit nanoseconds cannot hold the distance to a date centuries away
        // (parse_amz_date accepts any year), and the wrapped difference would pass the window.
        const auto t = std::chrono::floor<std::chrono::seconds>(auth.request_time.time_since_epoch());
        const auto n = std::chrono::floor<std::chrono::seconds>(now.time_since_epoch());
        auto skew = n > t ? n - t : t - n;
        if (skew > options.max_skew)
            return make_error(errc::request_time_too_skewed, "The difference between the request time (" +
                                                                 auth.amz_date +
                                                                 ") and the server's time is too large.");
    }

    auto key = signing_key(secret, auth.scope);
    auto expected = signature(key, string_to_sign(auth, canonical_request(req, auth)));
    if (!constant_time_equal(expected, detail::to_lower(auth.signature)))
        return make_error(errc::signature_does_not_match,
                          "The request signature we calculated does not match the signature you provided. "
                          "Check your key and signing method.");
    return ok();
}

} // namespace depot::auth
