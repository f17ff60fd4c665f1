#pragma once
/// \file
/// Steps shared by the operations that set ACLs (s3/acl.hpp): the ACL a request's x-amz-acl or
/// x-amz-grant-* headers ask for, the checks an ACL passes before it is stored (ownership controls,
/// grantees that exist, auth::acl_change), and storing an object version's ACL after a write.

#include "registry/types.hpp"
#include "s3/acl.hpp"
#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <optional>

namespace depot::server::s3op {

namespace asio = boost::asio;

/// The ACL of x-amz-acl or the x-amz-grant-* headers for a resource owned by `owner_id` in a bucket owned by
/// `bucket_owner_id`; nullopt when the request has none. Errors: invalid_request for both kinds at once
/// (S3's rule), canned_acl_of's and parse_grant_header's.
result<std::optional<s3::access_control_list>> acl_headers_of(const request_context& ctx,
                                                              std::string_view owner_id,
                                                              std::string_view bucket_owner_id,
                                                              bool for_object);

/// Whether `acl` is allowed on a resource of bucket `b` owned by `owner_id`. First its grants by e-mail
/// address become grants to the users with those addresses (unresolvable_grant, ambiguous_grant), so `acl`
/// is what is then stored. Under BucketOwnerEnforced only ACLs granting nothing beyond the owners
/// (acl_not_supported otherwise); each user grantee must exist (invalid_argument "Invalid id"); then
/// auth::acl_change decides (public access blocked, models buckets).
asio::awaitable<result<void>> check_acl_change(request_context& ctx, const registry::bucket& b,
                                               s3::access_control_list& acl, std::string_view owner_id);

/// The stored form (s3::stored_acl) of the ACL a write by `owner_id` into `b` asked for (checked before the
/// write with check_acl_change; none: `private`), empty when it grants nothing beyond the bucket's owner. So
/// an object another user wrote keeps its writer's FULL_CONTROL (S3's ObjectWriter). The write stores it with
/// the version, in its publish transaction (registry::put_object_request::acl; CreateMultipartUpload's upload
/// holds it until CompleteMultipartUpload).
std::string stored_object_acl(const registry::bucket& b, std::string_view owner_id,
                              const std::optional<s3::access_control_list>& acl);

/// The ACL headers of a write before it reads its body: acl_headers_of's checks, and the checks of
/// check_acl_change, for the writes that store ACLs (CreateBucket creates its bucket first and checks there).
/// nullopt when the request carries no ACL headers.
asio::awaitable<result<std::optional<s3::access_control_list>>>
object_acl_of_write(request_context& ctx, const registry::bucket& b);

/// What a write sets besides its bytes that a bucket policy counts as an action of its own, as AWS does: its
/// ACL (s3:PutObjectAcl) and its tags (s3:PutObjectTagging) on `key`. An explicit Deny of either refuses the
/// write (PutObject, POST Object, CreateMultipartUpload, CopyObject) with access_denied, as a Deny of
/// s3:PutObjectRetention refuses a locking one (authorize_requested_lock).
result<void> authorize_write_attributes(const request_context& ctx, const registry::bucket& b,
                                        std::string_view key, bool sets_acl, bool sets_tags);

/// The ACL a PutBucketAcl or PutObjectAcl asks for: its headers, or its AccessControlPolicy body (whose Owner
/// must be `owner_id`: access_denied otherwise), not both (invalid_request). Errors: the parsers', too_large
/// for a body above s3::max_acl_body, malformed_acl without either.
asio::awaitable<result<s3::access_control_list>> acl_of_put_acl(request_context& ctx,
                                                                std::string_view owner_id,
                                                                std::string_view bucket_owner_id,
                                                                bool for_object);

/// CreateBucket's access settings: x-amz-object-ownership and the ACL headers.
struct bucket_access_request
{
    std::optional<std::string> ownership; ///< nullopt: the default (BucketOwnerEnforced)
    std::optional<s3::access_control_list> acl;
};
/// Validated before the bucket is created: invalid_argument for an unknown ownership,
/// acl_with_object_ownership for an ACL beyond the owner under BucketOwnerEnforced, check_acl_change's.
asio::awaitable<result<bucket_access_request>> bucket_access_of_create(request_context& ctx);
/// Applied once the bucket exists (separate audited changes; until then the bucket is private).
asio::awaitable<result<void>> apply_bucket_access(request_context& ctx, const registry::bucket& b,
                                                  const bucket_access_request& access);

} // namespace depot::server::s3op
