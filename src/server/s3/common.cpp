#include "server/s3/common.hpp"

#include "common/hash.hpp"
#include "common/http_date.hpp"
#include "common/uri.hpp"
#include "s3/acl.hpp"
#include "s3/conditions.hpp"
#include "s3/etag.hpp"
#include "s3/header_values.hpp"
#include "s3/names.hpp"
#include "s3/tagging.hpp"
#include "s3/utf8.hpp"
#include "server/audit_requests.hpp"
#include "server/authorization.hpp"
#include "server/chunked_body.hpp"
#include "server/s3/access.hpp"
#include "server/s3/delete_conditions.hpp"
#include "server/s3/object_lock.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

#include <algorithm>
#include <array>
#include <boost/beast/core/string.hpp>
#include <charconv>

namespace depot::server::s3op {
namespace {

constexpr std::string_view meta_prefix = "x-amz-meta-";

std::string lower(std::string_view s)
{
    std::string out(s);
    for (auto& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string too_big_message(std::size_t limit)
{
    return "Your request was too big: XML request bodies are limited to " + std::to_string(limit) + " bytes.";
}

} // namespace

asio::awaitable<result<registry::bucket>> authorized_source_bucket(request_context& ctx,
                                                                   std::string_view name,
                                                                   std::string_view key,
                                                                   std::optional<std::string_view> version_id)
{
    auto b = co_await load_authorized_bucket(ctx, name, auth::permission::read_object, key,
                                             version_id ? "s3:GetObjectVersion" : "s3:GetObject", false,
                                             version_id);
    // The refusal is of the source: its row names it, and its model's team reads it.
    if (!b && b.error().code == errc::access_denied)
        note_refusal(ctx, {.bucket = std::string(name),
                           .key = std::string(key),
                           .copy_source = std::string(name) + "/" + std::string(key)});
    co_return b;
}

asio::awaitable<result<registry::list_page>> list_page_of(request_context& ctx, registry::list_request req)
{
    if (is_model_view(ctx))
        co_return co_await list_model_view(ctx, std::move(req));
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    if (req.prefix.starts_with(registry::snapshot_key_prefix))
        co_return co_await list_snapshot_view(ctx, *bucket, std::move(req));
    req.bucket_id = bucket->id;
    co_return co_await ctx.svc->objects.list(std::move(req));
}

result<void> check_key(std::string_view key)
{
    return s3::validate_object_key(key);
}

result<registry::object_headers> object_headers_of(const request_context& ctx)
{
    registry::object_headers h;
    auto opt = [&](http::field f) -> std::optional<std::string> {
        auto it = ctx.header->find(f);
        if (it == ctx.header->end())
            return std::nullopt;
        return std::string(it->value());
    };
    // Stored values are sent back as headers on every read, and PostgreSQL keeps them as text: HTTP's
    // obs-text bytes are allowed on the wire but must be refused here.
    for (auto f : {http::field::content_type, http::field::content_disposition, http::field::content_language,
                   http::field::cache_control, http::field::expires, http::field::content_encoding}) {
        if (auto it = ctx.header->find(f); it != ctx.header->end())
            if (auto valid = s3::validate_field_value(http::to_string(f), it->value()); !valid)
                return std::move(valid).error();
    }
    h.content_type = opt(http::field::content_type);
    h.content_disposition = opt(http::field::content_disposition);
    h.content_language = opt(http::field::content_language);
    h.cache_control = opt(http::field::cache_control);
    h.expires = opt(http::field::expires);
    if (auto enc = opt(http::field::content_encoding)) {
        // aws-chunked is transfer framing, not a property of the stored object: that token goes, the rest of
        // the list stays exactly as sent (spacing included), as S3 stores it.
        std::string kept;
        std::string_view rest = *enc;
        while (true) {
            auto comma = rest.find(',');
            auto item = rest.substr(0, comma);
            auto trimmed = item;
            while (!trimmed.empty() && (trimmed.front() == ' ' || trimmed.front() == '\t'))
                trimmed.remove_prefix(1);
            while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\t'))
                trimmed.remove_suffix(1);
            if (!trimmed.empty() && !boost::beast::iequals(trimmed, "aws-chunked")) {
                if (!kept.empty())
                    kept += ",";
                kept += item;
            }
            if (comma == std::string_view::npos)
                break;
            rest.remove_prefix(comma + 1);
        }
        kept.erase(0, kept.find_first_not_of(" \t"));
        kept.erase(kept.find_last_not_of(" \t") + 1);
        if (!kept.empty())
            h.content_encoding = std::move(kept);
    }
    for (const auto& f : *ctx.header) {
        auto name = f.name_string();
        if (name.size() > meta_prefix.size() &&
            boost::beast::iequals(name.substr(0, meta_prefix.size()), meta_prefix)) {
            auto key =
                lower(std::string_view(name.data() + meta_prefix.size(), name.size() - meta_prefix.size()));
            h.user_metadata.emplace_back(std::move(key), std::string(f.value()));
        }
    }
    if (auto valid = s3::validate_user_metadata(h.user_metadata); !valid)
        return std::move(valid).error();
    return h;
}

void set_object_headers(response& res, const registry::object_version& v)
{
    auto& h = res.headers;
    h.set(http::field::etag, s3::quote_etag(v.etag));
    h.set(http::field::last_modified, format_http_date(v.last_modified));
    h.set(http::field::accept_ranges, "bytes");
    h.set(http::field::content_type, v.headers.content_type.value_or("binary/octet-stream"));
    if (v.headers.content_encoding)
        h.set(http::field::content_encoding, *v.headers.content_encoding);
    if (v.headers.content_disposition)
        h.set(http::field::content_disposition, *v.headers.content_disposition);
    if (v.headers.content_language)
        h.set(http::field::content_language, *v.headers.content_language);
    if (v.headers.cache_control)
        h.set(http::field::cache_control, *v.headers.cache_control);
    if (v.headers.expires)
        h.set(http::field::expires, *v.headers.expires);
    for (const auto& [name, value] : v.headers.user_metadata)
        h.insert(std::string(meta_prefix) + name, value);
    if (v.version_id != "null")
        h.set("x-amz-version-id", v.version_id);
    if (!v.tags.empty())
        h.set("x-amz-tagging-count", std::to_string(v.tags.size()));
    set_lock_headers(res, v);
}

result<std::vector<s3::tag>> tagging_header_of(const request_context& ctx)
{
    auto header = ctx.get("x-amz-tagging");
    if (!header)
        return std::vector<s3::tag>{};
    return s3::parse_tagging_header(*header);
}

write_condition_headers write_conditions_of(const request_context& ctx)
{
    write_condition_headers out;
    if (auto v = ctx.get("if-match"))
        out.if_match = std::string(*v);
    if (auto v = ctx.get("if-none-match"))
        out.if_none_match = std::string(*v);
    return out;
}

result<void> check_acl_headers(const request_context& ctx, std::string_view operation)
{
    // Syntax first, whatever the operation (the owners do not matter to it).
    auto acl = acl_headers_of(ctx, "o", "o", true);
    if (!acl)
        return std::move(acl).error();
    if (!*acl || s3::is_owner_only(**acl, "o"))
        return ok();
    constexpr std::array<std::string_view, 6> storing = {
        "CreateBucket", "PutObject", "CopyObject", "PutBucketAcl", "PutObjectAcl", "CreateMultipartUpload"};
    if (std::find(storing.begin(), storing.end(), operation) != storing.end())
        return ok();
    return make_error(errc::not_implemented,
                      std::string(operation) +
                          " does not store ACLs yet: only the canned ACLs private, "
                          "bucket-owner-full-control and bucket-owner-read are accepted");
}

result<std::string> content_md5_of(const request_context& ctx)
{
    auto v = ctx.get("content-md5");
    if (!v)
        return std::string();
    auto raw = from_base64(*v);
    if (!raw || raw->size() != 16)
        return make_error(errc::invalid_digest, "The Content-MD5 you specified was invalid.");
    return std::move(*raw);
}

asio::awaitable<result<std::string>> read_small_body(request_context& ctx, std::size_t limit)
{
    auto md5_expected = content_md5_of(ctx);
    if (!md5_expected)
        co_return std::move(md5_expected).error();
    if (ctx.content_length && *ctx.content_length > limit)
        co_return make_error(errc::too_large, too_big_message(limit));
    std::string body;
    std::byte buf[16 * 1024];
    for (;;) {
        auto n = co_await ctx.body->read_some(buf);
        if (!n)
            co_return std::move(n).error();
        if (*n == 0)
            break;
        if (body.size() + *n > limit)
            co_return make_error(errc::too_large, too_big_message(limit));
        body.append(reinterpret_cast<const char*>(buf), *n);
    }
    if (!md5_expected->empty() && md5(body) != *md5_expected)
        co_return make_error(errc::bad_digest,
                             "The Content-MD5 you specified did not match what we received.");
    if (!ctx.payload.sha256.empty() && sha256(body) != ctx.payload.sha256)
        co_return make_error(errc::content_sha256_mismatch,
                             "The provided 'x-amz-content-sha256' header does not match what was computed.");
    co_return body;
}

result<copy_source> parse_copy_source(std::string_view raw)
{
    copy_source out;
    auto q = raw.find('?');
    if (q != std::string_view::npos) {
        auto params = parse_query(raw.substr(q + 1));
        if (!params)
            return make_error(errc::invalid_argument, "Invalid copy source encoding", "x-amz-copy-source");
        for (auto& [name, value] : *params)
            if (name == "versionId")
                out.version_id = value;
        raw = raw.substr(0, q);
    }
    auto decoded = uri_decode(raw);
    if (!decoded)
        return make_error(errc::invalid_argument, "Invalid copy source encoding", "x-amz-copy-source");
    // The source bucket, key and version are looked up in PostgreSQL.
    if (!s3::is_storable_text(*decoded) || !s3::is_storable_text(out.version_id.value_or("")))
        return make_error(errc::invalid_argument,
                          "The copy source must be valid UTF-8 without NUL once decoded",
                          "x-amz-copy-source");
    std::string_view path = *decoded;
    if (!path.empty() && path.front() == '/')
        path.remove_prefix(1);
    auto slash = path.find('/');
    if (slash == std::string_view::npos || slash == 0 || slash + 1 == path.size())
        return make_error(errc::invalid_argument,
                          "Copy Source must mention the source bucket and key: sourcebucket/sourcekey",
                          "x-amz-copy-source");
    out.bucket = std::string(path.substr(0, slash));
    out.key = std::string(path.substr(slash + 1));
    return out;
}

result<checksum_request> checksum_request_of(request_context& ctx)
{
    checksum_request out;
    for (const auto& f : *ctx.header) {
        auto algorithm = checksum_algorithm_from_header(f.name_string());
        if (!algorithm)
            continue;
        if (out.value)
            return make_error(errc::invalid_request, "Expecting a single x-amz-checksum- header");
        out.algorithm = algorithm;
        out.value = std::string(f.value());
    }
    if (auto trailer = ctx.get("x-amz-trailer"); trailer && !out.value) {
        std::string name(*trailer);
        for (auto& ch : name)
            ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (auto algorithm = checksum_algorithm_from_header(name)) {
            out.algorithm = algorithm;
            if (auto* chunked = dynamic_cast<chunked_body*>(ctx.body_decoder.get()))
                out.trailer = [chunked, name]() -> std::optional<std::string> {
                    auto v = chunked->decoder().trailer(name);
                    return v ? std::optional<std::string>(std::string(*v)) : std::nullopt;
                };
        }
    }
    if (auto declared = ctx.get("x-amz-sdk-checksum-algorithm")) {
        auto algorithm = parse_checksum_algorithm(*declared);
        if (!algorithm)
            return make_error(errc::invalid_request,
                              "Value for x-amz-sdk-checksum-algorithm header is invalid.");
        if (out.algorithm && *out.algorithm != *algorithm)
            return make_error(errc::invalid_request,
                              "Value for x-amz-sdk-checksum-algorithm header is invalid.");
        out.algorithm = algorithm;
        if (!out.value && !out.trailer)
            return make_error(
                errc::invalid_request,
                "x-amz-sdk-checksum-algorithm specified, but no corresponding x-amz-checksum-* or "
                "x-amz-trailer headers were found.");
    }
    return out;
}

void set_checksum_headers(response& res, std::string_view algorithm, std::string_view type,
                          std::string_view value)
{
    auto parsed = parse_checksum_algorithm(algorithm);
    if (!parsed || value.empty())
        return;
    res.headers.set(checksum_header_name(*parsed), value);
    if (!type.empty())
        res.headers.set("x-amz-checksum-type", type);
}

void set_xml_checksum(s3::checksums& out, std::string_view algorithm, std::string_view type,
                      std::string value)
{
    auto parsed = parse_checksum_algorithm(algorithm);
    if (!parsed || value.empty())
        return;
    switch (*parsed) {
    case checksum_algorithm::crc32:
        out.crc32 = std::move(value);
        break;
    case checksum_algorithm::crc32c:
        out.crc32c = std::move(value);
        break;
    case checksum_algorithm::crc64nvme:
        out.crc64nvme = std::move(value);
        break;
    case checksum_algorithm::sha1:
        out.sha1 = std::move(value);
        break;
    case checksum_algorithm::sha256:
        out.sha256 = std::move(value);
        break;
    }
    out.type = std::string(type);
}

result<int> integer_of(std::optional<std::string_view> value, std::string_view name, int fallback, int min,
                       int max)
{
    if (!value)
        return fallback;
    int n = 0;
    auto [p, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
    if (ec != std::errc() || p != value->data() + value->size() || n < min || n > max)
        return make_error(errc::invalid_argument,
                          std::string(name) + " must be an integer between " + std::to_string(min) + " and " +
                              std::to_string(max),
                          std::string(name));
    return n;
}

result<int> part_number_of(const request_context& ctx)
{
    auto n = integer_of(ctx.param("partNumber").value_or(""), "partNumber", 0, 1, 10000);
    if (!n)
        return make_error(errc::invalid_argument,
                          "Part number must be an integer between 1 and 10000, inclusive", "partNumber");
    return n;
}

result<void> check_copy_source_conditions(const request_context& ctx, const registry::object_version& source)
{
    s3::read_conditions conditions{.if_match = ctx.get("x-amz-copy-source-if-match"),
                                   .if_none_match = ctx.get("x-amz-copy-source-if-none-match"),
                                   .if_modified_since = ctx.get("x-amz-copy-source-if-modified-since"),
                                   .if_unmodified_since = ctx.get("x-amz-copy-source-if-unmodified-since")};
    return s3::to_result(s3::evaluate_copy_source_conditions(conditions, source.etag, source.last_modified));
}

namespace {
std::string_view trim_blanks(std::string_view v)
{
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t'))
        v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t'))
        v.remove_suffix(1);
    return v;
}
} // namespace

result<void> delete_conditions_of(registry::delete_conditions& request,
                                  std::optional<std::string_view> if_match,
                                  std::optional<std::string_view> size,
                                  std::optional<std::string_view> last_modified, std::string_view size_name,
                                  std::string_view last_modified_name)
{
    if (if_match)
        request.if_match = std::string(*if_match);
    if (size) {
        std::uint64_t n = 0;
        auto v = trim_blanks(*size);
        auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        if (v.empty() || ec != std::errc{} || end != v.data() + v.size())
            return make_error(errc::invalid_argument, std::string(size_name) + " must be a number of bytes",
                              std::string(size_name));
        request.if_match_size = n;
    }
    if (last_modified) {
        auto v = trim_blanks(*last_modified);
        auto t = parse_http_date(v);
        if (!t)
            t = parse_iso8601(v);
        if (!t)
            return make_error(errc::invalid_argument,
                              std::string(last_modified_name) +
                                  " must be an HTTP date or an ISO 8601 timestamp",
                              std::string(last_modified_name));
        request.if_match_last_modified = *t;
    }
    return ok();
}

} // namespace depot::server::s3op
