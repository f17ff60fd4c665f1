#pragma once
/// \file
/// Steps shared by the S3 operations that touch Object Lock: the x-amz-object-lock-* headers of a write,
/// x-amz-bypass-governance-retention (a fact auth::authorize decides on), the lock headers
/// of GET/HEAD, and the version a retention or legal-hold request addresses.

#include "registry/types.hpp"
#include "s3/object_lock.hpp"
#include "s3/sse.hpp"
#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>

namespace depot::server::s3op {

namespace asio = boost::asio;

/// The lock a write (PutObject, CopyObject, CreateMultipartUpload) asks for with its x-amz-object-lock-*
/// headers (s3::parse_lock_headers). Lock headers on a bucket without Object Lock: invalid_request.
result<s3::requested_lock> lock_request_of(const request_context& ctx, const registry::bucket& bucket);
/// The same with the lock "headers" looked up by `get` (POST Object's form fields).
result<s3::requested_lock> lock_request_of(const s3::header_lookup& get, const registry::bucket& bucket);

/// A write that sets a retention or a legal hold is also a PutObjectRetention / PutObjectLegalHold of `key`,
/// and needs those permissions besides the write's (as on AWS): the owner, an installation admin, or the
/// bucket's policy naming the action. A WRITE grant alone never locks what it writes.
asio::awaitable<result<void>> authorize_requested_lock(request_context& ctx, const registry::bucket& bucket,
                                                       std::string_view key, const s3::requested_lock& lock);

/// Whether the request asks to bypass GOVERNANCE retention (x-amz-bypass-governance-retention: true), once
/// its bucket was authorized (authorized_bucket): that decision already included whether the caller may
/// bypass (auth::bucket_resource::bypass_governance), so a request that asks and may not never gets here.
bool bypass_governance_of(const request_context& ctx);

/// x-amz-object-lock-mode, -retain-until-date and -legal-hold of GET/HEAD (when the version has them).
void set_lock_headers(response& res, const registry::object_version& v);

/// PutObjectRetention, GetObjectRetention, Put/GetObjectLegalHold: the bucket (authorized, with Object
/// Lock: invalid_request otherwise) and the version ctx.key and ?versionId= name (not a delete marker:
/// S3's answers for those).
struct lock_target
{
    registry::bucket bucket;
    registry::object_version version;
};
asio::awaitable<result<lock_target>> lock_target_of(request_context& ctx);

} // namespace depot::server::s3op
