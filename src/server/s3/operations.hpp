#pragma once
/// \file
/// The S3 operations, one function per AWS action (each in its own file, named after the action). Every
/// operation follows the same lifecycle: the dispatcher has authenticated the caller and authorized the
/// route's permission (the scope and the read-only views, server/authorization.hpp); the operation
/// authorizes the bucket rows it looks up (authorized_bucket: ownership), validates its input, executes, and
/// returns a response or an error that the dispatcher renders as S3 XML.

#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace depot::registry {
struct bucket;
struct list_page;
struct list_request;
struct object_handle;
} // namespace depot::registry

namespace depot::server::s3op {

namespace asio = boost::asio;
using handler = asio::awaitable<result<response>> (*)(request_context&);

asio::awaitable<result<response>> list_buckets(request_context& ctx);
asio::awaitable<result<response>> create_bucket(request_context& ctx);
asio::awaitable<result<response>> head_bucket(request_context& ctx);
asio::awaitable<result<response>> delete_bucket(request_context& ctx);
asio::awaitable<result<response>> get_bucket_location(request_context& ctx);
asio::awaitable<result<response>> get_bucket_versioning(request_context& ctx);
asio::awaitable<result<response>> put_bucket_versioning(request_context& ctx);
asio::awaitable<result<response>> list_object_versions(request_context& ctx);
asio::awaitable<result<response>> get_bucket_acl(request_context& ctx);
asio::awaitable<result<response>> put_bucket_acl(request_context& ctx);
asio::awaitable<result<response>> put_object_acl(request_context& ctx);
asio::awaitable<result<response>> put_public_access_block(request_context& ctx);
asio::awaitable<result<response>> get_public_access_block(request_context& ctx);
asio::awaitable<result<response>> delete_public_access_block(request_context& ctx);
asio::awaitable<result<response>> put_bucket_ownership_controls(request_context& ctx);
asio::awaitable<result<response>> get_bucket_ownership_controls(request_context& ctx);
asio::awaitable<result<response>> delete_bucket_ownership_controls(request_context& ctx);
asio::awaitable<result<response>> list_objects(request_context& ctx);
asio::awaitable<result<response>> list_objects_v2(request_context& ctx);
asio::awaitable<result<response>> delete_objects(request_context& ctx);
asio::awaitable<result<response>> put_object(request_context& ctx);
asio::awaitable<result<response>> copy_object(request_context& ctx);
asio::awaitable<result<response>> get_object(request_context& ctx);
asio::awaitable<result<response>> head_object(request_context& ctx);
asio::awaitable<result<response>> delete_object(request_context& ctx);
asio::awaitable<result<response>> get_object_acl(request_context& ctx);
asio::awaitable<result<response>> get_object_attributes(request_context& ctx);
asio::awaitable<result<response>> create_multipart_upload(request_context& ctx);
asio::awaitable<result<response>> upload_part(request_context& ctx);
asio::awaitable<result<response>> upload_part_copy(request_context& ctx);
asio::awaitable<result<response>> complete_multipart_upload(request_context& ctx);
asio::awaitable<result<response>> abort_multipart_upload(request_context& ctx);
asio::awaitable<result<response>> list_parts(request_context& ctx);
asio::awaitable<result<response>> list_multipart_uploads(request_context& ctx);
asio::awaitable<result<response>> get_object_tagging(request_context& ctx);
asio::awaitable<result<response>> put_object_tagging(request_context& ctx);
asio::awaitable<result<response>> delete_object_tagging(request_context& ctx);
asio::awaitable<result<response>> get_bucket_tagging(request_context& ctx);
asio::awaitable<result<response>> put_bucket_tagging(request_context& ctx);
asio::awaitable<result<response>> delete_bucket_tagging(request_context& ctx);
asio::awaitable<result<response>> put_object_lock_configuration(request_context& ctx);
asio::awaitable<result<response>> get_object_lock_configuration(request_context& ctx);
asio::awaitable<result<response>> put_object_retention(request_context& ctx);
asio::awaitable<result<response>> get_object_retention(request_context& ctx);
asio::awaitable<result<response>> put_object_legal_hold(request_context& ctx);
asio::awaitable<result<response>> get_object_legal_hold(request_context& ctx);
asio::awaitable<result<response>> put_bucket_cors(request_context& ctx);
asio::awaitable<result<response>> get_bucket_cors(request_context& ctx);
asio::awaitable<result<response>> delete_bucket_cors(request_context& ctx);
asio::awaitable<result<response>> put_bucket_encryption(request_context& ctx);
asio::awaitable<result<response>> get_bucket_encryption(request_context& ctx);
asio::awaitable<result<response>> delete_bucket_encryption(request_context& ctx);
asio::awaitable<result<response>> put_bucket_policy(request_context& ctx);
asio::awaitable<result<response>> get_bucket_policy(request_context& ctx);
asio::awaitable<result<response>> delete_bucket_policy(request_context& ctx);
asio::awaitable<result<response>> get_bucket_policy_status(request_context& ctx);
asio::awaitable<result<response>> put_bucket_lifecycle(request_context& ctx);
asio::awaitable<result<response>> get_bucket_lifecycle(request_context& ctx);
asio::awaitable<result<response>> delete_bucket_lifecycle(request_context& ctx);
/// OPTIONS on a bucket or object: a browser's CORS preflight, answered without authentication.
asio::awaitable<result<response>> cors_preflight(request_context& ctx);
/// Adds the CORS headers the bucket's configuration gives a request carrying Origin (none otherwise).
asio::awaitable<void> add_cors_headers(request_context& ctx, response& res);

/// GetObject/HeadObject of an opened object: conditionals, Range or partNumber, headers, and the body (its
/// first bytes read before the headers go out). `bucket` adds x-amz-version-id; nullptr for none.
asio::awaitable<result<response>> respond_with_object(request_context& ctx,
                                                      std::shared_ptr<registry::object_handle> handle,
                                                      const registry::bucket* bucket, bool head);

/// A page of current keys for ListObjects/ListObjectsV2 (`req.bucket_id` is filled in here): the bucket's
/// objects, or the model view's files.
asio::awaitable<result<registry::list_page>> list_page_of(request_context& ctx, registry::list_request req);

// The read-only S3 view of the model registry (model_view.cpp): s3://<models
// bucket>/<team>/<model>/<ref>/<path>, where ref is a version number, a version label or an alias (resolved
// at request time).

/// The request addresses the models bucket.
bool is_model_view(const request_context& ctx);
/// GET/HEAD of the view key `view_key` (team/model/ref/path): the frozen file's bytes; no_such_key for
/// anything the caller cannot see.
asio::awaitable<result<response>> read_model_file(request_context& ctx, std::string_view view_key, bool head);
asio::awaitable<result<registry::list_page>> list_model_view(request_context& ctx,
                                                             registry::list_request req);

// The read-only S3 view of a bucket's snapshots (snapshot_view.cpp): s3://<bucket>/.snapshots/<name>/<key>.

/// GetObject/HeadObject of .snapshots/<name>/<key>: no_such_key for an unknown snapshot or a key the
/// snapshot does not hold.
asio::awaitable<result<response>> read_snapshot_object(request_context& ctx, bool head);
/// The key `.snapshots/<name>/<key>` of a bucket as of that snapshot; no_such_key when either is unknown.
asio::awaitable<result<registry::object_handle>>
open_snapshot_key(request_context& ctx, std::int64_t bucket_id, std::string_view view_key);
/// The source of CopyObject / UploadPartCopy: a version of a key (object_service::open_version), or a key of
/// the snapshot view (copying out of a snapshot restores one object; invalid_argument with a version id).
asio::awaitable<result<registry::object_handle>>
open_copy_source(request_context& ctx, std::int64_t bucket_id, std::string_view key,
                 const std::optional<std::string>& version_id);
/// ListObjects/ListObjectsV2 whose prefix starts with .snapshots/ (the caller checked the bucket).
asio::awaitable<result<registry::list_page>>
list_snapshot_view(request_context& ctx, const registry::bucket& bucket, registry::list_request req);

} // namespace depot::server::s3op
