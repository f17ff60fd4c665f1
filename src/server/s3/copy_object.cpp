// CopyObject — https://docs.aws.amazon.com/AmazonS3/latest/API/API_CopyObject.html
// The copy references the source's blobs; no byte is read or written.
#include "common/uri.hpp"
#include "s3/responses.hpp"
#include "server/authorization.hpp"
#include "server/s3/access.hpp"
#include "server/s3/common.hpp"
#include "server/s3/object_lock.hpp"
#include "server/s3/operations.hpp"
#include "server/s3/sse.hpp"
#include "server/s3/versioning.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {
asio::awaitable<result<response>> copy_object(request_context& ctx)
{
    if (auto k = check_key(ctx.key); !k)
        co_return std::move(k).error();
    auto source = parse_copy_source(*ctx.get("x-amz-copy-source"));
    if (!source)
        co_return std::move(source).error();
    if (source->version_id)
        if (auto valid = check_version_id(*source->version_id, "x-amz-copy-source"); !valid)
            co_return std::move(valid).error();

    auto directive = ctx.get("x-amz-metadata-directive").value_or("COPY");
    if (directive != "COPY" && directive != "REPLACE")
        co_return make_error(errc::invalid_argument, "Unknown metadata directive.",
                             "x-amz-metadata-directive");
    std::optional<registry::object_headers> replacement;
    if (directive == "REPLACE") {
        auto h = object_headers_of(ctx);
        if (!h)
            co_return std::move(h).error();
        replacement = std::move(*h);
    }
    auto tagging_directive = ctx.get("x-amz-tagging-directive").value_or("COPY");
    if (tagging_directive != "COPY" && tagging_directive != "REPLACE")
        co_return make_error(errc::invalid_argument, "Unknown tagging directive.", "x-amz-tagging-directive");
    std::optional<std::vector<s3::tag>> tags;
    if (tagging_directive == "REPLACE") {
        auto t = tagging_header_of(ctx);
        if (!t)
            co_return std::move(t).error();
        tags = std::move(*t);
    }

    auto target = authorized_bucket(ctx);
    if (!target)
        co_return std::move(target).error();
    // The copy's own lock headers (a copy never takes its source's lock).
    auto lock = lock_request_of(ctx, *target);
    if (!lock)
        co_return std::move(lock).error();
    if (auto may = co_await authorize_requested_lock(ctx, *target, ctx.key, *lock); !may)
        co_return std::move(may).error();
    auto acl = co_await object_acl_of_write(ctx, *target);
    if (!acl)
        co_return std::move(acl).error();
    const auto source_version =
        source->version_id ? std::optional<std::string_view>(*source->version_id) : std::nullopt;
    auto source_bucket = co_await authorized_source_bucket(ctx, source->bucket, source->key, source_version);
    if (!source_bucket)
        co_return std::move(source_bucket).error();
    auto opened = co_await open_copy_source(ctx, source_bucket->id, source->key, source->version_id);
    if (!opened)
        co_return std::move(opened).error();
    const auto& src = opened->version;
    if (src.is_delete_marker) {
        if (source->version_id)
            co_return make_error(errc::invalid_request,
                                 "The source of a copy request may not specifically refer to a delete marker "
                                 "by version id.");
        co_return make_error(errc::no_such_key, "The specified key does not exist.");
    }

    // Encryption: an SSE-C source needs its key (x-amz-copy-source-server-side-encryption-customer-*); the
    // copy is encrypted as its own headers or its bucket's default say, which may mean re-encrypting it.
    if (auto unlocked = unlock_for_read(ctx, *opened, "x-amz-copy-source-"); !unlocked)
        co_return std::move(unlocked).error();
    auto sse = write_encryption(ctx, *target);
    if (!sse)
        co_return std::move(sse).error();
    const bool reencrypt = copy_needs_reencryption(*opened, *sse);

    // Copying a key onto itself is a way to change its metadata, its encryption, or (naming an older
    // version) to restore it.
    if (source_bucket->id == target->id && source->key == ctx.key && !replacement && !source->version_id &&
        !reencrypt)
        co_return make_error(
            errc::invalid_request,
            "This copy request is illegal because it is trying to copy an object to itself without "
            "changing the object's metadata, storage class, website redirect location or encryption "
            "attributes.");

    if (auto met = check_copy_source_conditions(ctx, src); !met)
        co_return std::move(met).error();
    // The tags the copy carries: its own (REPLACE), or its source's, which it reads (s3:GetObjectTagging
    // there, as AWS asks) and sets (s3:PutObjectTagging here). A policy's Deny of either refuses the copy.
    const bool copies_tags = !tags && !src.tags.empty();
    if (copies_tags &&
        policy_denies(ctx, *source_bucket,
                      source->version_id ? "s3:GetObjectVersionTagging" : "s3:GetObjectTagging", source->key,
                      source_version))
        co_return make_error(
            errc::access_denied,
            "Access Denied: the source bucket's policy denies reading the source's tags, which "
            "the copy would carry: copy with x-amz-tagging-directive REPLACE");
    if (auto may = authorize_write_attributes(ctx, *target, ctx.key, acl->has_value(),
                                              copies_tags || (tags && !tags->empty()));
        !may)
        co_return std::move(may).error();

    // The copy's ACL, stored with it (a named value: GCC 12 destroys temporaries in a co_await operand
    // twice).
    std::string stored_acl = stored_object_acl(*target, ctx.who.user_id, *acl);
    if (reencrypt) {
        // Its lock too: the referencing copy below stores it, so this one must (it was left out).
        copy_properties copy{.headers = std::move(replacement),
                             .tags = std::move(tags),
                             .retention = lock->retention,
                             .legal_hold = lock->legal_hold,
                             .acl = std::move(stored_acl)};
        auto copied =
            co_await copy_reencrypting(ctx, *target, *source_bucket, *opened, *sse, std::move(copy));
        if (!copied)
            co_return std::move(copied).error();
        auto res = xml_response(
            s3::copy_object_result_xml({.etag = copied->etag, .last_modified = copied->last_modified}));
        if (src.version_id != "null" || source->version_id)
            res.headers.set("x-amz-copy-source-version-id", src.version_id);
        if (copied->version_id != "null")
            res.headers.set("x-amz-version-id", copied->version_id);
        set_sse_headers(res, *sse);
        co_return res;
    }

    // If-Match / If-None-Match on the target, checked with the publish as PutObject's are.
    auto conditions = write_conditions_of(ctx);
    registry::copy_object_request request{.source_bucket = &*source_bucket,
                                          .source_key = source->key,
                                          .target = &*target,
                                          .key = ctx.key,
                                          .owner_id = ctx.who.user_id,
                                          .replace_headers = std::move(replacement),
                                          .replace_tags = std::move(tags),
                                          .retention = lock->retention,
                                          .legal_hold = lock->legal_hold,
                                          .expected_source_row = src.row_id,
                                          // A snapshot's version need not be current (or even listed).
                                          .source_version_pinned = source->version_id.has_value() ||
                                                                   registry::is_snapshot_key(source->key),
                                          .if_match = std::move(conditions.if_match),
                                          .if_none_match = std::move(conditions.if_none_match),
                                          .acl = std::move(stored_acl)};
    auto copied = co_await ctx.svc->objects.copy_object(ctx.audit, std::move(request));
    if (!copied)
        co_return std::move(copied).error();

    auto res = xml_response(
        s3::copy_object_result_xml({.etag = copied->etag, .last_modified = copied->last_modified}));
    if (src.version_id != "null" || source->version_id)
        res.headers.set("x-amz-copy-source-version-id", src.version_id);
    if (copied->version_id != "null")
        res.headers.set("x-amz-version-id", copied->version_id);
    set_sse_headers(res, *copied);
    co_return res;
}

} // namespace depot::server::s3op
