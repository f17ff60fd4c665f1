// GetObject — https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html
// HeadObject — https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadObject.html
#include "common/http_date.hpp"
#include "s3/conditions.hpp"
#include "s3/etag.hpp"
#include "s3/header_values.hpp"
#include "s3/range.hpp"
#include "server/audit_requests.hpp"
#include "server/authorization.hpp"
#include "server/errors.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/s3/sse.hpp"
#include "server/s3/versioning.hpp"
#include "server/services.hpp"

#include <algorithm>
#include <array>

namespace depot::server::s3op {
namespace {

/// `response-*` query parameters override response headers, on signed requests only (AWS refuses them on
/// anonymous ones: a public object's link must not serve it as another type or as an attachment named by
/// whoever wrote the link).
constexpr std::array<std::pair<std::string_view, http::field>, 6> overrides = {{
    {"response-content-type", http::field::content_type},
    {"response-content-language", http::field::content_language},
    {"response-expires", http::field::expires},
    {"response-cache-control", http::field::cache_control},
    {"response-content-disposition", http::field::content_disposition},
    {"response-content-encoding", http::field::content_encoding},
}};

/// What users store never acts as a page of this origin: a stored `text/html` (or SVG, or anything a
/// browser renders) opens as a sandboxed document of a unique origin without script, and is never sniffed
/// into another type. Every surface that serves an object's bytes answers through respond_with_object, so
/// none can forget this (SECURITY.md).
void isolate_content(response& res)
{
    res.headers.set("content-security-policy", "sandbox");
    res.headers.set("x-content-type-options", "nosniff");
}

} // namespace

asio::awaitable<result<response>> respond_with_object(request_context& ctx,
                                                      std::shared_ptr<registry::object_handle> handle,
                                                      const registry::bucket* bucket, bool head)
{
    const auto& v = handle->version;
    if (ctx.who.user_id.empty())
        for (const auto& [param, field] : overrides)
            if (ctx.param(param))
                co_return make_error(errc::invalid_request,
                                     "Request specific response headers cannot be used for anonymous GET "
                                     "requests.");
    // SSE-C: the object's key must come with the request (checked against the stored key check).
    if (auto unlocked = unlock_for_read(ctx, *handle); !unlocked)
        co_return std::move(unlocked).error();
    s3::read_conditions conditions{.if_match = ctx.get("if-match"),
                                   .if_none_match = ctx.get("if-none-match"),
                                   .if_modified_since = ctx.get("if-modified-since"),
                                   .if_unmodified_since = ctx.get("if-unmodified-since")};
    auto outcome = s3::evaluate_read_conditions(conditions, v.etag, v.last_modified);
    if (outcome == s3::condition_result::precondition_failed)
        co_return make_error(errc::precondition_failed,
                             "At least one of the pre-conditions you specified did not hold");
    if (outcome == s3::condition_result::not_modified) {
        response res;
        res.status = http::status::not_modified;
        res.headers.set(http::field::etag, s3::quote_etag(v.etag));
        res.headers.set(http::field::last_modified, format_http_date(v.last_modified));
        isolate_content(res);
        co_return res;
    }

    response res;
    set_object_headers(res, v);
    set_sse_headers(res, v, handle->customer_key);
    if (bucket) {
        set_version_header(res, *bucket, v);
        // How many tags the object has is read from its tags: not shown where the policy denies reading them.
        const std::string_view key = registry::live_key_of(ctx.key);
        if (!v.tags.empty() &&
            policy_denies(ctx, *bucket,
                          ctx.has_param("versionId") ? "s3:GetObjectVersionTagging" : "s3:GetObjectTagging",
                          key))
            res.headers.erase("x-amz-tagging-count");
        // So are the version's retention and legal hold, read as GetObjectRetention and GetObjectLegalHold
        // read them (AWS shows them only to who may).
        if (v.retention && policy_denies(ctx, *bucket, "s3:GetObjectRetention", key)) {
            res.headers.erase("x-amz-object-lock-mode");
            res.headers.erase("x-amz-object-lock-retain-until-date");
        }
        if (v.legal_hold && policy_denies(ctx, *bucket, "s3:GetObjectLegalHold", key))
            res.headers.erase("x-amz-object-lock-legal-hold");
    }
    for (const auto& [param, field] : overrides)
        if (auto value = ctx.param(param)) {
            // The query is percent-decoded: %0D%0A would otherwise end the header and start another.
            if (auto valid = s3::validate_field_value(param, *value); !valid)
                co_return std::move(valid).error();
            res.headers.set(field, *value);
        }
    // After the object's own headers and the overrides: neither can take it back.
    isolate_content(res);

    std::uint64_t first = 0;
    std::uint64_t length = v.size;
    bool whole = true;
    auto range_header = ctx.get("range");
    // If-Range: the range is served only while its validator still names this version; otherwise the
    // whole object (RFC 9110 section 13.1.5), which is what a resuming client needs after a change.
    if (auto validator = ctx.get("if-range");
        validator && range_header && !s3::if_range_holds(*validator, v.etag, v.last_modified))
        range_header.reset();
    if (ctx.has_param("partNumber")) {
        if (range_header)
            co_return make_error(errc::invalid_request,
                                 "Cannot specify both Range header and partNumber query parameter");
        auto number = part_number_of(ctx);
        if (!number)
            co_return std::move(number).error();
        auto parts = co_await ctx.svc->objects.parts(v.row_id);
        if (parts.empty()) {
            // A single-part object is its own part 1.
            if (*number != 1)
                co_return make_error(errc::invalid_part_number,
                                     "The requested partnumber is not satisfiable");
        } else {
            auto it = std::find_if(parts.begin(), parts.end(),
                                   [&](const auto& p) { return p.part_number == *number; });
            if (it == parts.end())
                co_return make_error(errc::invalid_part_number,
                                     "The requested partnumber is not satisfiable");
            first = it->offset;
            length = it->size;
            whole = false;
            res.status = http::status::partial_content;
            res.headers.set("x-amz-mp-parts-count", std::to_string(parts.size()));
            // A composite checksum is made of part checksums: a part read can be verified by its own.
            if (v.checksum_type == "COMPOSITE" &&
                ctx.get("x-amz-checksum-mode") == std::optional<std::string_view>("ENABLED"))
                set_checksum_headers(res, v.checksum_algorithm, "COMPOSITE", it->checksum);
            if (length > 0)
                res.headers.set(http::field::content_range,
                                s3::content_range({first, first + length - 1}, v.size));
        }
    } else if (range_header) {
        auto range = s3::parse_range(*range_header, v.size);
        if (!range) {
            std::string_view target = ctx.header->target();
            auto err =
                s3_error_response(range.error(), target.substr(0, target.find('?')), ctx.request_id, head);
            err.headers.set(http::field::content_range, s3::unsatisfied_content_range(v.size));
            co_return err;
        }
        if (*range) {
            first = (*range)->first;
            length = (*range)->length();
            whole = false;
            res.status = http::status::partial_content;
            res.headers.set(http::field::content_range, s3::content_range(**range, v.size));
        }
    }
    // Checksums describe the whole object; S3 returns them only for full reads.
    if (whole && ctx.get("x-amz-checksum-mode") == std::optional<std::string_view>("ENABLED")) {
        set_checksum_headers(res, v.checksum_algorithm, v.checksum_type, v.checksum_value);
        // The whole-object SHA-256 Depot keeps for deduplication, next to a full-object checksum.
        if (v.checksum_type == "FULL_OBJECT" && v.sha256.size() == 32 && v.checksum_algorithm != "SHA256")
            res.headers.set("x-amz-checksum-sha256", encode_checksum(v.sha256));
    }
    if (head) {
        res.head_only = true;
        res.headers.set(http::field::content_length, std::to_string(length));
        co_return res;
    }
    // The first bytes are read before the headers go out: a blob store outage answers 503 SlowDown instead
    // of a 200 whose body stops short.
    auto stream = co_await ctx.svc->objects.read_started(*handle, first, length);
    if (!stream)
        co_return std::move(stream).error();
    res.stream = std::move(*stream);
    res.stream_length = length;
    res.keep = handle;
    co_return res;
}

namespace {

/// A GET that succeeded writes its download audit row (server/audit_requests.hpp) before the response goes
/// out; `has_models`: whether any model lives in the bucket, when the read looked the bucket up.
asio::awaitable<result<response>> audited(request_context& ctx, bool head, result<response> r,
                                          std::optional<bool> has_models)
{
    if (r && !head)
        co_await audit_download(ctx, has_models);
    co_return r;
}

asio::awaitable<result<response>> read_object(request_context& ctx, bool head)
{
    if (is_model_view(ctx)) {
        auto r = co_await read_model_file(ctx, ctx.key, head);
        co_return co_await audited(ctx, head, std::move(r), std::nullopt);
    }
    if (!ctx.frozen_view_key.empty()) {
        // An alias-scoped credential reads the frozen file of the aliased version at this path, exactly what
        // the models view serves, never the live object (server/authorization.hpp).
        auto bucket = authorized_bucket(ctx);
        if (!bucket)
            co_return std::move(bucket).error();
        auto r = co_await read_model_file(ctx, ctx.frozen_view_key, head);
        co_return co_await audited(ctx, head, std::move(r), bucket->has_models);
    }
    if (registry::is_snapshot_key(ctx.key)) {
        auto r = co_await read_snapshot_object(ctx, head);
        co_return co_await audited(ctx, head, std::move(r), std::nullopt);
    }
    auto version_id = version_id_of(ctx);
    if (!version_id)
        co_return std::move(version_id).error();
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto opened = co_await ctx.svc->objects.open_version(bucket->id, ctx.key, *version_id);
    if (!opened)
        co_return std::move(opened).error();
    if (opened->version.is_delete_marker)
        co_return delete_marker_response(ctx, opened->version, version_id->has_value());
    auto handle = std::make_shared<registry::object_handle>(std::move(*opened));
    auto r = co_await respond_with_object(ctx, std::move(handle), &*bucket, head);
    co_return co_await audited(ctx, head, std::move(r), bucket->has_models);
}

} // namespace

asio::awaitable<result<response>> get_object(request_context& ctx)
{
    return read_object(ctx, false);
}

asio::awaitable<result<response>> head_object(request_context& ctx)
{
    return read_object(ctx, true);
}

} // namespace depot::server::s3op
