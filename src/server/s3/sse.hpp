#pragma once
/// \file
/// Server-side encryption for the S3 handlers: what a write asks for (its headers, else the bucket's default
/// encryption), whether a read presents what an object's encryption needs (SSE-C: the same key), and the
/// response headers that report it. See docs/ARCHITECTURE.md, "Server-side encryption".

#include "registry/service/multipart_service.hpp"
#include "registry/service/object_service.hpp"
#include "registry/service/sse.hpp"
#include "registry/types.hpp"
#include "s3/sse.hpp"
#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string_view>
#include <vector>

namespace depot::server::s3op {

namespace asio = boost::asio;

/// The encryption of a new object written by this request into `b`: SSE-C or SSE-S3 from its headers,
/// else SSE-S3 when the bucket has default encryption. Errors: s3::parse_sse_headers's; invalid_request for
/// SSE-C over plain HTTP (unless --sse-c-allow-http); not_implemented for SSE-S3 without a master key.
result<registry::sse_spec> write_encryption(const request_context& ctx, const registry::bucket& b);
/// The same with the SSE "headers" looked up by `get` (POST Object's form fields).
result<registry::sse_spec> write_encryption(const request_context& ctx, const registry::bucket& b,
                                            const s3::header_lookup& get);

/// Refuses SSE headers on a request that has no object to encrypt or decrypt and would otherwise ignore
/// them (invalid_argument for x-amz-server-side-encryption, as S3; SSE-C headers are checked as usual).
result<void> no_write_encryption(const request_context& ctx);

/// For a read of `h` (GetObject, HeadObject; with `prefix` "x-amz-copy-source-" a copy source): checks the
/// request's SSE-C headers against the version and keeps the key in `h.customer_key` for reading. Errors as
/// S3: invalid_request when an SSE-C object is read without its key, or SSE-C headers are sent for an object
/// that is not SSE-C; access_denied for another key; the header errors of s3::parse_sse_headers.
result<void> unlock_for_read(const request_context& ctx, registry::object_handle& h,
                             std::string_view prefix = "x-amz-");

/// For a request on an upload in progress (UploadPart, UploadPartCopy, CompleteMultipartUpload): the SSE-C
/// key it presents, checked against the upload's (empty for an upload that is not SSE-C). `required`: the
/// key must come with the request (a part's bytes are sealed under it); CompleteMultipartUpload checks it
/// only when sent. Errors as unlock_for_read.
result<std::string> upload_customer_key(const request_context& ctx, const registry::multipart_upload& upload,
                                        bool required);

/// Whether a copy of `source` stored with `target` encryption cannot reference the source's blobs (see
/// copy_object_encrypted.cpp).
bool copy_needs_reencryption(const registry::object_handle& source, const registry::sse_spec& target);

/// What a copy is besides its bytes, as registry::copy_object_request says it: `headers`/`tags` replace the
/// source's (REPLACE), its own lock (never the source's), its ACL (stored form, "" = the default).
struct copy_properties
{
    std::optional<registry::object_headers> headers;
    std::optional<std::vector<s3::tag>> tags;
    std::optional<s3::retention> retention;
    std::optional<bool> legal_hold;
    std::string acl;
};

/// CopyObject by reading the source's plaintext and writing it as a new object encrypted with `sse`
/// (object_service::put_object, audited as object.copy, with the request's If-Match / If-None-Match on the
/// target): the same copy as the referencing one, only its bytes are written again.
asio::awaitable<result<registry::object_version>>
copy_reencrypting(request_context& ctx, const registry::bucket& target, const registry::bucket& source_bucket,
                  const registry::object_handle& source, registry::sse_spec sse, copy_properties copy);

/// x-amz-server-side-encryption (SSE-S3) or the SSE-C algorithm and key MD5 headers of a version.
void set_sse_headers(response& res, const registry::object_version& v, std::string_view customer_key = {});
/// The same for what a write was asked to do (before the version exists).
void set_sse_headers(response& res, const registry::sse_spec& sse);

} // namespace depot::server::s3op
