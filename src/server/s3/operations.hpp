#pragma once
/// \file
/// The S3 operations, one function per AWS action (each in its own file, named after the action). Every
/// operation follows the same lifecycle: the dispatcher has authenticated the caller; the operation
/// authorizes (bucket ownership for now), validates its input, executes, and returns a response or an error
/// that the dispatcher renders as S3 XML.

#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>

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

} // namespace depot::server::s3op
