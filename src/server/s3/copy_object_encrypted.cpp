// CopyObject between encryptions: the part of CopyObject that cannot reference the source's blobs.
// A copy references its source's blobs when the copy is to be stored as the source is (plaintext, or SSE-S3
// from SSE-S3). Otherwise — into or out of encryption, or anything SSE-C, whose blobs are sealed under one
// customer's key — the source's plaintext streams through the write protocol again, encrypted as the copy
// asks: a PutObject of the source's bytes, audited as the copy it is.
#include "registry/service/sse.hpp"
#include "registry/vocabulary.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/s3/sse.hpp"
#include "server/services.hpp"

#include <algorithm>

namespace depot::server::s3op {

bool copy_needs_reencryption(const registry::object_handle& source, const registry::sse_spec& target)
{
    if (target.mode == registry::sealing::customer || source.version.sse == "SSE-C")
        return true;
    return registry::sealing_of(source.version.sse) != target.mode ||
           std::any_of(source.segments.begin(), source.segments.end(),
                       [&](const registry::segment& s) { return s.sealed != target.mode; });
}

asio::awaitable<result<registry::object_version>>
copy_reencrypting(request_context& ctx, const registry::bucket& target, const registry::bucket& source_bucket,
                  const registry::object_handle& source, registry::sse_spec sse, copy_properties copy)
{
    auto conditions = write_conditions_of(ctx); // the copy's own If-Match / If-None-Match, as PutObject's
    const auto& src = source.version;
    auto body = ctx.svc->objects.read(source, 0, src.size);
    registry::put_object_request request{
        .target = &target,
        .key = ctx.key,
        .owner_id = ctx.who.user_id,
        .headers = copy.headers ? std::move(*copy.headers) : src.headers,
        .content_length = src.size,
        .if_match = std::move(conditions.if_match),
        .if_none_match = std::move(conditions.if_none_match),
        .body = body.get(),
        .tags = copy.tags ? std::move(*copy.tags) : src.tags,
        .retention = copy.retention,
        .legal_hold = copy.legal_hold,
        .sse = std::move(sse),
        .acl = std::move(copy.acl),
        .audit_action = "object.copy",
        .audit_extra = ",\"source\":" + registry::audit_quote(source_bucket.name + "/" + src.key)};
    co_return co_await ctx.svc->objects.put_object(ctx.audit, std::move(request));
}

} // namespace depot::server::s3op
