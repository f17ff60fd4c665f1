/// \file
/// `parse`: extracting SigV4 authentication data from the Authorization header or a presigned query.
/// Error codes and messages follow what S3 answers for the same mistakes.

#include "auth/sigv4.hpp"
#include "auth/sigv4_detail.hpp"
#include "common/http_date.hpp"
#include "common/uri.hpp"

#include <algorithm>
#include <charconv>

namespace depot::auth {
namespace {

using detail::find_header;
using detail::trim;

constexpr std::string_view algorithm = "AWS4-HMAC-SHA256";
constexpr std::string_view content_sha256 = "x-amz-content-sha256";

result<std::optional<parsed_auth>> unsupported_algorithm(std::string_view name)
{
    if (name == "AWS")
        return make_error(errc::access_denied, "Signature Version 2 is not supported; sign requests with AWS "
                                               "Signature Version 4 (AWS4-HMAC-SHA256).");
    if (name == "AWS4-ECDSA-P256-SHA256")
        return make_error(errc::access_denied,
                          "Signature Version 4A is not supported; sign requests with AWS4-HMAC-SHA256.");
    return make_error(errc::access_denied, "Unsupported authorization algorithm '" + std::string(name) +
                                               "'; sign requests with AWS4-HMAC-SHA256.");
}

/// Classifies an x-amz-content-sha256 value.
std::optional<payload_mode> classify_payload(std::string_view value)
{
    if (value.size() == 64 && detail::is_hex(value))
        return payload_mode::signed_hash;
    if (value == "UNSIGNED-PAYLOAD")
        return payload_mode::unsigned_payload;
    if (value == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD")
        return payload_mode::streaming_signed;
    if (value == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER")
        return payload_mode::streaming_signed_trailer;
    if (value == "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
        return payload_mode::streaming_unsigned_trailer;
    return std::nullopt;
}

error bad_content_sha256()
{
    return make_error(errc::invalid_argument,
                      "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD, "
                      "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, STREAMING-UNSIGNED-PAYLOAD-TRAILER or the "
                      "hex SHA-256 of the payload.",
                      std::string(content_sha256));
}

/// Splits "a;b;c" into lower-case names; nullopt on an empty or repeated name or embedded blanks.
std::optional<std::vector<std::string>> parse_signed_headers(std::string_view list)
{
    std::vector<std::string> out;
    while (true) {
        auto semi = list.find(';');
        auto name = list.substr(0, semi);
        if (name.empty() || name.find_first_of(" \t,") != std::string_view::npos)
            return std::nullopt;
        auto lower = detail::to_lower(name);
        if (std::find(out.begin(), out.end(), lower) != out.end())
            return std::nullopt;
        out.push_back(std::move(lower));
        if (semi == std::string_view::npos)
            break;
        list.remove_prefix(semi + 1);
    }
    return out;
}

bool contains(const std::vector<std::string>& names, std::string_view name)
{
    return std::find(names.begin(), names.end(), name) != names.end();
}

bool valid_signature(std::string_view sig)
{
    return sig.size() == 64 && detail::is_hex(sig);
}

/// "AWS4-HMAC-SHA256 Credential=AKID/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date,
/// Signature=<hex>" with any (or no) blanks after the commas.
result<std::optional<parsed_auth>> parse_header_auth(const request_view& req, std::string_view value)
{
    auto malformed = [](std::string detail) {
        return make_error(errc::authorization_header_malformed,
                          "The authorization header is malformed; " + detail);
    };
    value = trim(value);
    auto space = value.find_first_of(" \t");
    auto alg = value.substr(0, space);
    if (alg != algorithm)
        return alg.empty() ? malformed("the header is empty.") : unsupported_algorithm(alg);
    if (space == std::string_view::npos)
        return malformed("missing Credential, SignedHeaders and Signature.");

    std::optional<std::string_view> credential, signed_headers, sig;
    std::string_view rest = value.substr(space + 1);
    while (true) {
        auto comma = rest.find(',');
        auto part = trim(rest.substr(0, comma));
        auto eq = part.find('=');
        if (eq == std::string_view::npos)
            return malformed(
                "expecting Credential=..., SignedHeaders=..., Signature=... separated by commas.");
        auto key = part.substr(0, eq);
        auto val = part.substr(eq + 1);
        std::optional<std::string_view>* slot = key == "Credential"      ? &credential
                                                : key == "SignedHeaders" ? &signed_headers
                                                : key == "Signature"     ? &sig
                                                                         : nullptr;
        if (!slot)
            return malformed("unknown component '" + std::string(key) + "'.");
        if (*slot)
            return malformed("repeated component '" + std::string(key) + "'.");
        *slot = val;
        if (comma == std::string_view::npos)
            break;
        rest.remove_prefix(comma + 1);
    }
    if (!credential)
        return malformed("missing Credential.");
    if (!signed_headers)
        return malformed("missing SignedHeaders.");
    if (!sig)
        return malformed("missing Signature.");

    parsed_auth auth;
    auto cred = detail::parse_credential(*credential);
    if (!cred)
        return malformed("the Credential is mal-formed; expecting "
                         "\"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".");
    auth.access_key_id = std::move(cred->first);
    auth.scope = std::move(cred->second);
    auto names = parse_signed_headers(*signed_headers);
    if (!names)
        return malformed("SignedHeaders must be a list of distinct header names separated by ';'.");
    if (!contains(*names, "host"))
        return malformed("SignedHeaders must include 'host'.");
    auth.signed_headers = std::move(*names);
    if (!valid_signature(*sig))
        return malformed("the Signature must be 64 hexadecimal characters.");
    auth.signature = detail::to_lower(*sig);

    if (auto amz_date = find_header(req.headers, "x-amz-date")) {
        auto t = parse_amz_date(trim(*amz_date));
        if (!t)
            return make_error(errc::access_denied,
                              "AWS authentication requires a valid Date or x-amz-date header", "x-amz-date");
        auth.request_time = *t;
        auth.amz_date = std::string(trim(*amz_date));
    } else if (auto date = find_header(req.headers, "date")) {
        auto t = parse_http_date(*date);
        if (!t)
            return make_error(errc::access_denied,
                              "AWS authentication requires a valid Date or x-amz-date header", "Date");
        auth.request_time = *t;
        auth.amz_date = format_amz_date(*t);
    } else {
        return make_error(errc::access_denied,
                          "AWS authentication requires a valid Date or x-amz-date header");
    }

    auto payload = find_header(req.headers, content_sha256);
    if (!payload)
        return make_error(errc::missing_security_header,
                          "Your request was missing a required header: x-amz-content-sha256",
                          std::string(content_sha256));
    if (detail::count_header(req.headers, content_sha256) > 1)
        return bad_content_sha256();
    auto mode = classify_payload(trim(*payload));
    if (!mode)
        return bad_content_sha256();
    auth.mode = *mode;
    auth.payload_hash = std::string(trim(*payload));
    return std::optional<parsed_auth>(std::move(auth));
}

result<std::optional<parsed_auth>>
parse_presigned(const request_view& req, const std::vector<std::pair<std::string, std::string>>& params)
{
    auto query_error = [](std::string message) {
        return make_error(errc::authorization_query_parameters_error, std::move(message));
    };
    static constexpr std::size_t count = 6;
    static constexpr std::string_view names[count] = {"X-Amz-Algorithm",     "X-Amz-Credential",
                                                      "X-Amz-Date",          "X-Amz-Expires",
                                                      "X-Amz-SignedHeaders", "X-Amz-Signature"};
    std::optional<std::string_view> values[count];
    for (const auto& [name, value] : params) {
        for (std::size_t i = 0; i < count; ++i) {
            if (name != names[i])
                continue;
            if (values[i])
                return query_error("The " + std::string(names[i]) + " parameter must appear only once.");
            values[i] = value;
        }
    }
    const auto& [alg, credential, date, expires, signed_headers, sig] = values;
    if (alg && *alg != algorithm)
        return unsupported_algorithm(*alg);
    for (const auto& v : values) {
        if (!v)
            return query_error("Query-string authentication version 4 requires the X-Amz-Algorithm, "
                               "X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and "
                               "X-Amz-Expires parameters.");
    }

    parsed_auth auth;
    auth.presigned = true;
    auto cred = detail::parse_credential(*credential);
    if (!cred)
        return query_error(
            "Error parsing the X-Amz-Credential parameter; the Credential is mal-formed; expecting "
            "\"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".");
    auth.access_key_id = std::move(cred->first);
    auth.scope = std::move(cred->second);

    auto t = parse_amz_date(*date);
    if (!t)
        return query_error("X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"");
    auth.request_time = *t;
    auth.amz_date = std::string(*date);

    long long secs = -1;
    auto [end, ec] = std::from_chars(expires->data(), expires->data() + expires->size(), secs);
    if (ec != std::errc{} || end != expires->data() + expires->size() || expires->empty() ||
        expires->front() == '-' || expires->front() == '+' || secs < 1)
        return query_error("X-Amz-Expires must be a positive number of seconds");
    if (secs > max_presigned_expiry.count())
        return query_error("X-Amz-Expires must be less than a week (in seconds) that is 604800");
    auth.expires = std::chrono::seconds(secs);

    auto list = parse_signed_headers(*signed_headers);
    if (!list)
        return query_error("X-Amz-SignedHeaders must be a list of distinct header names separated by ';'.");
    if (!contains(*list, "host"))
        return query_error("X-Amz-SignedHeaders must include 'host'.");
    auth.signed_headers = std::move(*list);

    if (!valid_signature(*sig))
        return query_error("X-Amz-Signature must be 64 hexadecimal characters.");
    auth.signature = detail::to_lower(*sig);

    // The body is unsigned unless the client chose to sign an x-amz-content-sha256 header.
    auth.payload_hash = "UNSIGNED-PAYLOAD";
    auth.mode = payload_mode::unsigned_payload;
    auto payload = find_header(req.headers, content_sha256);
    if (payload && contains(auth.signed_headers, content_sha256)) {
        if (detail::count_header(req.headers, content_sha256) > 1)
            return bad_content_sha256();
        auto mode = classify_payload(trim(*payload));
        if (!mode)
            return bad_content_sha256();
        if (*mode == payload_mode::streaming_signed || *mode == payload_mode::streaming_signed_trailer)
            return make_error(errc::invalid_argument,
                              "Signed aws-chunked payloads require the Authorization header",
                              std::string(content_sha256));
        auth.mode = *mode;
        auth.payload_hash = std::string(trim(*payload));
    }
    return std::optional<parsed_auth>(std::move(auth));
}

bool has_param(const std::vector<std::pair<std::string, std::string>>& params, std::string_view name)
{
    return std::any_of(params.begin(), params.end(), [&](const auto& p) { return p.first == name; });
}

result<std::optional<parsed_auth>> refuse_unsigned_headers(result<std::optional<parsed_auth>> parsed,
                                                           const request_view& req)
{
    if (!parsed || !*parsed)
        return parsed;
    auto names = unsigned_headers(req, **parsed);
    if (names.empty())
        return parsed;
    std::string list;
    for (const auto& n : names)
        list += (list.empty() ? "" : ",") + n;
    return make_error(errc::access_denied, "There were headers present in the request which were not signed",
                      "HeadersNotSigned=" + list);
}

} // namespace

std::vector<std::string> unsigned_headers(const request_view& req, const parsed_auth& auth)
{
    std::vector<std::string> out;
    for (const auto& h : req.headers) {
        auto name = detail::to_lower(h.name);
        if (!name.starts_with("x-amz-") || name == content_sha256 || name == "x-amz-date")
            continue;
        if (!contains(auth.signed_headers, name) && !contains(out, name))
            out.push_back(std::move(name));
    }
    return out;
}

result<std::optional<parsed_auth>> parse(const request_view& req)
{
    auto [path, query] = detail::split_target(req.raw_target);
    if (!uri_decode(path))
        return make_error(errc::invalid_argument, "The request path contains a malformed percent-escape");
    auto params = parse_query(query);
    if (!params)
        return make_error(errc::invalid_argument, "The query string contains a malformed percent-escape");

    const bool presigned = has_param(*params, "X-Amz-Algorithm");
    auto authorization_count = detail::authorization_headers(req.headers, presigned);
    if (!authorization_count)
        return std::move(authorization_count).error();
    if (*authorization_count == 1)
        return refuse_unsigned_headers(parse_header_auth(req, *find_header(req.headers, "authorization")),
                                       req);
    if (presigned)
        return refuse_unsigned_headers(parse_presigned(req, *params), req);
    if (has_param(*params, "AWSAccessKeyId") && has_param(*params, "Signature"))
        return unsupported_algorithm("AWS");
    return std::optional<parsed_auth>();
}

} // namespace depot::auth
