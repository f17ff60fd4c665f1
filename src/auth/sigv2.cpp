/// \file
/// AWS Signature Version 2: parsing, the string to sign, verification and the client-side helpers.
/// Error codes and messages follow what S3 answers for the same mistakes.

#include "auth/sigv2.hpp"

#include "auth/sigv4_detail.hpp"
#include "common/hash.hpp"
#include "common/http_date.hpp"
#include "common/uri.hpp"

#include <algorithm>
#include <charconv>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdexcept>

namespace depot::auth::sigv2 {
namespace {

using detail::count_header;
using detail::find_header;
using detail::iequals;
using detail::trim;

constexpr std::string_view header_error =
    "AWS authorization header is invalid.  Expected AwsAccessKeyId:signature";
constexpr std::string_view query_params_missing =
    "Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters";

// Sorted (byte order), so that the list can be searched with std::binary_search.
constexpr std::string_view subresource_names[] = {
    "accelerate",
    "acl",
    "analytics",
    "cors",
    "delete",
    "encryption",
    "intelligent-tiering",
    "inventory",
    "legal-hold",
    "lifecycle",
    "location",
    "logging",
    "metrics",
    "notification",
    "object-lock",
    "ownershipControls",
    "partNumber",
    "policy",
    "policyStatus",
    "publicAccessBlock",
    "replication",
    "requestPayment",
    "response-cache-control",
    "response-content-disposition",
    "response-content-encoding",
    "response-content-language",
    "response-content-type",
    "response-expires",
    "restore",
    "retention",
    "select",
    "select-type",
    "tagging",
    "torrent",
    "uploadId",
    "uploads",
    "versionId",
    "versioning",
    "versions",
    "website",
};

/// HMAC-SHA1 (OpenSSL), 20 raw bytes: SigV2's MAC, used nowhere else.
std::string hmac_sha1(std::string_view key, std::string_view data)
{
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!HMAC(EVP_sha1(), key.data(), static_cast<int>(key.size()),
              reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len))
        throw std::runtime_error("HMAC failed");
    return std::string(reinterpret_cast<const char*>(out), len);
}

/// One query parameter as received: the decoded name and value, and whether it had a '='.
struct raw_param
{
    std::string name;
    std::string value;
    bool has_value = false;
};

std::optional<std::vector<raw_param>> split_query(std::string_view query)
{
    std::vector<raw_param> out;
    while (!query.empty()) {
        auto amp = query.find('&');
        auto piece = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
        if (piece.empty())
            continue;
        auto eq = piece.find('=');
        auto name = uri_decode(piece.substr(0, eq));
        auto value = uri_decode(eq == std::string_view::npos ? std::string_view() : piece.substr(eq + 1));
        if (!name || !value)
            return std::nullopt;
        out.push_back({std::move(*name), std::move(*value), eq != std::string_view::npos});
    }
    return out;
}

const raw_param* find_param(const std::vector<raw_param>& params, std::string_view name)
{
    for (const auto& p : params)
        if (p.name == name)
            return &p;
    return nullptr;
}

std::size_t count_param(const std::vector<raw_param>& params, std::string_view name)
{
    return static_cast<std::size_t>(
        std::count_if(params.begin(), params.end(), [&](const raw_param& p) { return p.name == name; }));
}

bool printable_key_id(std::string_view id)
{
    return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
        return static_cast<unsigned char>(c) >= 0x21 && static_cast<unsigned char>(c) <= 0x7E && c != ':';
    });
}

/// The raw HMAC-SHA1 behind a base64 signature; nullopt unless exactly 20 bytes. A '+' that reached us as a
/// space (an unencoded '+' decoded as form data by a proxy) is put back.
std::optional<std::string> decode_signature(std::string_view b64)
{
    std::string text(b64);
    std::replace(text.begin(), text.end(), ' ', '+');
    auto raw = from_base64(text);
    if (!raw || raw->size() != 20)
        return std::nullopt;
    return raw;
}

/// The dates SigV2 clients send: an HTTP date (boto's "... GMT", s3cmd's "... +0000") or, in x-amz-date,
/// SigV4's ISO 8601 basic format.
std::optional<std::chrono::system_clock::time_point> parse_v2_date(std::string_view text)
{
    text = trim(text);
    if (auto t = parse_http_date(text))
        return t;
    if (text.ends_with(" +0000")) {
        std::string gmt(text.substr(0, text.size() - 6));
        gmt += " GMT";
        if (auto t = parse_http_date(gmt))
            return t;
    }
    return parse_amz_date(text);
}

result<void> check_content_sha256(const request_view& req)
{
    auto value = find_header(req.headers, "x-amz-content-sha256");
    if (!value)
        return ok();
    auto v = trim(*value);
    if (count_header(req.headers, "x-amz-content-sha256") > 1 ||
        !(v == "UNSIGNED-PAYLOAD" || (v.size() == 64 && detail::is_hex(v))))
        return make_error(
            errc::invalid_argument,
            "With Signature Version 2, x-amz-content-sha256 must be UNSIGNED-PAYLOAD or the hex "
            "SHA-256 of the payload (aws-chunked bodies need Signature Version 4).",
            "x-amz-content-sha256");
    return ok();
}

result<parsed_auth> parse_header(const request_view& req, std::string_view value)
{
    auto invalid = [] {
        return make_error(errc::invalid_argument, std::string(header_error), "Authorization");
    };
    value = trim(value);
    if (!value.starts_with("AWS") || value.size() < 4 || (value[3] != ' ' && value[3] != '\t'))
        return invalid();
    auto credentials = trim(value.substr(4));
    auto colon = credentials.find(':');
    if (colon == std::string_view::npos)
        return invalid();
    auto id = credentials.substr(0, colon);
    if (!printable_key_id(id))
        return invalid();
    auto sig = decode_signature(credentials.substr(colon + 1));
    if (!sig)
        return invalid();

    parsed_auth auth;
    auth.access_key_id = std::string(id);
    auth.signature = std::move(*sig);
    // x-amz-date wins over Date (and then Date is not in the string to sign).
    auto amz_date = find_header(req.headers, "x-amz-date");
    auto date = amz_date ? amz_date : find_header(req.headers, "date");
    auto t = date ? parse_v2_date(*date) : std::nullopt;
    if (!t)
        return make_error(errc::access_denied,
                          "AWS authentication requires a valid Date or x-amz-date header",
                          amz_date ? "x-amz-date" : "Date");
    auth.request_time = *t;
    return auth;
}

result<parsed_auth> parse_query(const std::vector<raw_param>& params)
{
    const raw_param* id = find_param(params, "AWSAccessKeyId");
    const raw_param* sig = find_param(params, "Signature");
    const raw_param* expires = find_param(params, "Expires");
    if (!id || !sig || !expires)
        return make_error(errc::access_denied, std::string(query_params_missing));
    for (std::string_view name : {"AWSAccessKeyId", "Signature", "Expires"})
        if (count_param(params, name) > 1)
            return make_error(errc::authorization_query_parameters_error,
                              "The " + std::string(name) + " parameter must appear only once.");
    if (!printable_key_id(id->value))
        return make_error(errc::authorization_query_parameters_error,
                          "AWSAccessKeyId must be printable ASCII characters.");
    auto raw_sig = decode_signature(sig->value);
    if (!raw_sig)
        return make_error(errc::authorization_query_parameters_error,
                          "Signature must be the base64 of a 20-byte HMAC-SHA1.");

    const std::string& text = expires->value;
    long long secs = -1;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), secs);
    bool digits =
        !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || ec != std::errc{} || end != text.data() + text.size())
        return make_error(errc::access_denied, "Invalid date (should be seconds since epoch): " +
                                                   (text.size() > 64 ? text.substr(0, 64) + "..." : text));
    parsed_auth auth;
    auth.presigned = true;
    auth.access_key_id = id->value;
    auth.signature = std::move(*raw_sig);
    auth.expires_epoch = secs;
    auth.expires_text = text;
    return auth;
}

/// CanonicalizedAmzHeaders: "name:value\n" for every x-amz-* header (and, when presigned, x-amz-* query
/// parameter without a header of that name), sorted by name, values of one name joined by ','.
std::string canonical_amz_headers(const request_view& req, const std::vector<raw_param>* query_params,
                                  bool skip_amz_date)
{
    std::vector<std::pair<std::string, std::string>> lines;
    auto add = [&](std::string name, std::string_view value) {
        for (auto& [n, v] : lines)
            if (n == name) {
                v.push_back(',');
                v += trim(value);
                return;
            }
        lines.emplace_back(std::move(name), std::string(trim(value)));
    };
    for (const auto& h : req.headers) {
        auto name = detail::to_lower(h.name);
        if (name.starts_with("x-amz-") && !(skip_amz_date && name == "x-amz-date"))
            add(std::move(name), h.value);
    }
    if (query_params) {
        const std::size_t from_headers = lines.size();
        for (const auto& p : *query_params) {
            auto name = detail::to_lower(p.name);
            if (!name.starts_with("x-amz-"))
                continue;
            bool in_headers =
                std::any_of(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(from_headers),
                            [&](const auto& l) { return l.first == name; });
            if (!in_headers)
                add(std::move(name), p.value);
        }
    }
    std::sort(lines.begin(), lines.end());
    std::string out;
    for (const auto& [name, value] : lines) {
        out += name;
        out.push_back(':');
        out += value;
        out.push_back('\n');
    }
    return out;
}

std::string canonical_resource(std::string_view path, const std::vector<raw_param>& params,
                               std::string_view virtual_host_bucket, bool bucket_slash = false,
                               std::string_view path_suffix = {})
{
    std::string out;
    if (!virtual_host_bucket.empty()) {
        out.push_back('/');
        out += virtual_host_bucket;
    }
    out += path.empty() ? std::string_view("/") : path;
    if (bucket_slash)
        out.push_back('/');
    out += path_suffix;
    std::vector<const raw_param*> subs;
    for (const auto& p : params)
        if (std::binary_search(std::begin(subresource_names), std::end(subresource_names),
                               std::string_view(p.name)))
            subs.push_back(&p);
    std::stable_sort(subs.begin(), subs.end(),
                     [](const raw_param* a, const raw_param* b) { return a->name < b->name; });
    char sep = path_suffix.empty() ? '?' : '&';
    for (const auto* p : subs) {
        out.push_back(sep);
        sep = '&';
        out += p->name;
        if (p->has_value) {
            out.push_back('=');
            out += p->value;
        }
    }
    return out;
}

/// A standard header's line: the header's (trimmed) value, else, when presigned, the query parameter of the
/// lower-case name, else empty.
std::string standard_value(const request_view& req, std::string_view name,
                           const std::vector<raw_param>* query_params)
{
    if (auto h = find_header(req.headers, name))
        return std::string(trim(*h));
    if (query_params)
        if (const auto* p = find_param(*query_params, name))
            return p->value;
    return {};
}

std::string build_string_to_sign(const request_view& req, bool presigned, std::string_view date_line,
                                 std::string_view virtual_host_bucket, bool skip_amz_date = false,
                                 bool bucket_slash = false, std::string_view path_suffix = {})
{
    auto [path, query] = detail::split_target(req.raw_target);
    auto params = split_query(query).value_or(std::vector<raw_param>{});
    const auto* qp = presigned ? &params : nullptr;
    std::string out;
    out.reserve(128 + req.raw_target.size());
    out += req.method;
    out.push_back('\n');
    out += standard_value(req, "content-md5", qp);
    out.push_back('\n');
    out += standard_value(req, "content-type", qp);
    out.push_back('\n');
    out += date_line;
    out.push_back('\n');
    out += canonical_amz_headers(req, qp, skip_amz_date);
    out += canonical_resource(path, params, virtual_host_bucket, bucket_slash, path_suffix);
    return out;
}

std::string header_date_line(const request_view& req)
{
    if (find_header(req.headers, "x-amz-date"))
        return {};
    auto date = find_header(req.headers, "date");
    return date ? std::string(trim(*date)) : std::string();
}

/// The first query parameter of a presigned request that its string to sign does not cover, if any. Covered
/// are the three authentication parameters, the sub-resources (CanonicalizedResource) and, when no header of
/// the same name is sent or it has the parameter's value (a header wins, and a different parameter is not
/// what was signed), x-amz-* parameters and lower-case content-type and content-md5. Anything else (prefix,
/// delimiter, marker, max-keys, list-type, ...) could be edited by whoever holds the URL without breaking its
/// signature. Except encoding-type: it changes only how the answer spells the keys (URL-encoded), never which
/// keys it lists or what it reads, and botocore adds encoding-type=url, unsigned, to every listing it
/// presigns.
std::optional<std::string> unsigned_parameter(const request_view& req, const std::vector<raw_param>& params)
{
    for (const auto& p : params) {
        const std::string_view name = p.name;
        if (name == "AWSAccessKeyId" || name == "Signature" || name == "Expires" || name == "encoding-type" ||
            std::binary_search(std::begin(subresource_names), std::end(subresource_names), name))
            continue;
        const auto lower = detail::to_lower(name);
        const bool header_like =
            lower.starts_with("x-amz-") || name == "content-type" || name == "content-md5";
        if (header_like) {
            // Signed when no header of the name is sent; with one, the header is what was signed, and the
            // parameter may only repeat it (boto3 presigns Content-Type into the query and the client
            // sends it as a header too).
            const auto header = find_header(req.headers, lower);
            if (!header || detail::trim(*header) == std::string_view(p.value))
                continue;
        }
        return p.name;
    }
    return std::nullopt;
}

/// A parameter name for an error message: at most 64 bytes of printable ASCII.
std::string printable(std::string_view name)
{
    std::string out;
    for (char c : name.substr(0, 64))
        out.push_back(static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f ? c
                                                                                                    : '?');
    return out;
}

} // namespace

std::span<const std::string_view> subresources()
{
    return subresource_names;
}

bool applies(const request_view& req)
{
    if (auto value = find_header(req.headers, "authorization")) {
        auto v = trim(*value);
        if (v.starts_with("AWS") && v.size() > 3 && (v[3] == ' ' || v[3] == '\t'))
            return true;
    }
    auto [path, query] = detail::split_target(req.raw_target);
    auto params = split_query(query);
    return params && (find_param(*params, "AWSAccessKeyId") || find_param(*params, "Signature"));
}

result<parsed_auth> parse(const request_view& req)
{
    auto [path, query] = detail::split_target(req.raw_target);
    if (!uri_decode(path))
        return make_error(errc::invalid_argument, "The request path contains a malformed percent-escape");
    auto params = split_query(query);
    if (!params)
        return make_error(errc::invalid_argument, "The query string contains a malformed percent-escape");
    if (auto sha = check_content_sha256(req); !sha)
        return std::move(sha).error();

    const bool presigned = find_param(*params, "AWSAccessKeyId") || find_param(*params, "Signature") ||
                           find_param(*params, "X-Amz-Algorithm");
    auto authorization_count = detail::authorization_headers(req.headers, presigned);
    if (!authorization_count)
        return std::move(authorization_count).error();
    if (*authorization_count == 1)
        return parse_header(req, *find_header(req.headers, "authorization"));
    if (auto name = unsigned_parameter(req, *params))
        return make_error(errc::authorization_query_parameters_error,
                          "Signature Version 2 does not sign the query parameter '" + printable(*name) +
                              "', so a presigned URL may not carry it (presign with Signature Version 4)");
    return parse_query(*params);
}

std::string string_to_sign(const request_view& req, const parsed_auth& auth,
                           std::string_view virtual_host_bucket)
{
    return build_string_to_sign(
        req, auth.presigned, auth.presigned ? auth.expires_text : header_date_line(req), virtual_host_bucket);
}

std::string signature(std::string_view secret, std::string_view string_to_sign)
{
    return to_base64(hmac_sha1(secret, string_to_sign));
}

result<void> verify(const parsed_auth& auth, const request_view& req, std::string_view virtual_host_bucket,
                    std::string_view secret, std::chrono::system_clock::time_point now,
                    const verify_options& options)
{
    // In whole seconds: dates far away must not overflow the clock's nanoseconds.
    const long long n = std::chrono::floor<std::chrono::seconds>(now.time_since_epoch()).count();
    if (auth.presigned) {
        if (auth.expires_epoch < n)
            return make_error(errc::expired_presigned_request, "Request has expired");
        if (auth.expires_epoch - n > options.max_expiry.count() + options.max_skew.count())
            return make_error(errc::authorization_query_parameters_error,
                              "Expires must be less than a week (604800 seconds) in the future");
    } else {
        const long long t =
            std::chrono::floor<std::chrono::seconds>(auth.request_time.time_since_epoch()).count();
        if ((n > t ? n - t : t - n) > options.max_skew.count())
            return make_error(errc::request_time_too_skewed,
                              "The difference between the request time and the server's time is too large.");
    }
    auto expected = hmac_sha1(secret, string_to_sign(req, auth, virtual_host_bucket));
    if (constant_time_equal(expected, auth.signature))
        return ok();
    // AWS's own worked example (DELETE with x-amz-date) signs the x-amz-date value on the Date line and
    // leaves it out of the x-amz-* lines; clients that followed the example sign that way. The same values
    // are covered either way.
    // A path-style request of a bucket (`/bucket`, a listing): botocore and AWS's examples sign the resource
    // as `/bucket/`. The same bucket either way.
    const auto path = detail::split_target(req.raw_target).first;
    if (virtual_host_bucket.empty() && path.size() > 1 && path.find('/', 1) == std::string_view::npos) {
        auto slashed =
            hmac_sha1(secret, build_string_to_sign(req, auth.presigned,
                                                   auth.presigned ? auth.expires_text : header_date_line(req),
                                                   virtual_host_bucket, false, true));
        if (constant_time_equal(slashed, auth.signature))
            return ok();
    }
    // botocore signs a ListObjectsV2 resource as its model's request URI, `/bucket?list-type=2`: the same
    // bucket and the same operation (SigV2 signs no other listing parameter either way).
    auto [raw_path, raw_query] = detail::split_target(req.raw_target);
    const bool bucket_level = virtual_host_bucket.empty()
                                  ? raw_path.size() > 1 && raw_path.find('/', 1) == std::string_view::npos
                                  : raw_path == "/" || raw_path.empty();
    if (bucket_level) {
        const auto params = split_query(raw_query).value_or(std::vector<raw_param>{});
        const auto* list_type = find_param(params, "list-type");
        if (list_type && list_type->value == "2") {
            auto listing = hmac_sha1(
                secret, build_string_to_sign(req, auth.presigned,
                                             auth.presigned ? auth.expires_text : header_date_line(req),
                                             virtual_host_bucket, false, false, "?list-type=2"));
            if (constant_time_equal(listing, auth.signature))
                return ok();
        }
    }
    auto amz_date = auth.presigned ? std::nullopt : find_header(req.headers, "x-amz-date");
    if (amz_date) {
        auto alternate =
            hmac_sha1(secret, build_string_to_sign(req, false, trim(*amz_date), virtual_host_bucket, true));
        if (constant_time_equal(alternate, auth.signature))
            return ok();
    }
    return make_error(errc::signature_does_not_match,
                      "The request signature we calculated does not match the signature you provided. "
                      "Check your key and signing method.");
}

std::string authorization(std::string_view method, std::string_view raw_target,
                          std::span<const header_view> headers, std::string_view access_key_id,
                          std::string_view secret)
{
    request_view req{method, raw_target, headers};
    auto sts = build_string_to_sign(req, false, header_date_line(req), {});
    return "AWS " + std::string(access_key_id) + ":" + signature(secret, sts);
}

std::string presign(std::string_view method, std::string_view raw_target, std::string_view access_key_id,
                    std::string_view secret, std::chrono::system_clock::time_point expires)
{
    const auto secs = std::chrono::floor<std::chrono::seconds>(expires.time_since_epoch()).count();
    const std::string expires_text = std::to_string(secs);
    request_view req{method, raw_target, {}};
    auto sts = build_string_to_sign(req, true, expires_text, {});
    std::string out(raw_target);
    out += raw_target.find('?') == std::string_view::npos ? '?' : '&';
    out += "AWSAccessKeyId=" + uri_encode(access_key_id) + "&Expires=" + expires_text +
           "&Signature=" + uri_encode(signature(secret, sts));
    return out;
}

} // namespace depot::auth::sigv2
