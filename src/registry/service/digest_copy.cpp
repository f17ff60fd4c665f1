#include "registry/service/digest_copy.hpp"

namespace depot::registry {

asio::awaitable<result<object_version>> copy_from_digest(const audit_context& who, catalog_service& catalog,
                                                         bucket_service& buckets, object_service& objects,
                                                         const digest_copy_request& req)
{
    for (int attempt = 0; attempt < 5; ++attempt) {
        auto source = co_await catalog.find_source(req.owner_id, req.sha256, req.size, req.within);
        if (!source)
            co_return make_error(errc::not_found,
                                 "No object you can read has this SHA-256 and size; upload the bytes");
        auto source_bucket = co_await buckets.get(source->bucket);
        if (!source_bucket)
            continue;
        if (req.may_read && !req.may_read(*source_bucket, source->key))
            co_return make_error(errc::not_found,
                                 "No object you can read has this SHA-256 and size; upload the bytes");
        if (req.target->encryption == "AES256") {
            // The target bucket encrypts what it stores (its default encryption); a reference to the
            // source's segments would not be (encrypted content is never a digest source). So the copy is a
            // put of the source's bytes, sealed, audited as the copy it is.
            if (!objects.has_sse_master_key())
                co_return make_error(errc::not_implemented,
                                     "The bucket encrypts new objects but this server has no SSE master key "
                                     "configured (--sse-master-key-file)");
            auto opened = co_await objects.open_version(source_bucket->id, source->key, source->version_id);
            if (!opened || opened->version.row_id != source->version_row)
                continue; // changed meanwhile: look again
            auto body = objects.read(*opened, 0, opened->version.size);
            put_object_request put{
                .target = req.target,
                .key = req.key,
                .owner_id = req.owner_id,
                .headers = req.headers ? *req.headers : opened->version.headers,
                .content_length = opened->version.size,
                .expected_sha256 = req.sha256,
                .max_size = opened->version.size, // what was stored once may be stored again, in parts or not
                .body = body.get(),
                .sse = sse_spec{.mode = sealing::master},
                .audit_action = "object.copy",
                .audit_extra = ",\"source\":" + audit_quote(source_bucket->name + "/" + source->key)};
            co_return co_await objects.put_object(who, std::move(put));
        }
        copy_object_request copy{.source_bucket = &*source_bucket,
                                 .source_key = source->key,
                                 .target = req.target,
                                 .key = req.key,
                                 .owner_id = req.owner_id,
                                 .replace_headers = req.headers,
                                 // Made from content, not from the object found: its tags describe that
                                 // object (and may be another user's).
                                 .replace_tags = std::vector<s3::tag>{},
                                 .expected_source_row = source->version_row,
                                 .source_version_pinned = true};
        auto copied = co_await objects.copy_object(who, std::move(copy));
        if (copied)
            co_return std::move(*copied);
        if (copied.error().code != errc::no_such_key && copied.error().code != errc::precondition_failed)
            co_return std::move(copied).error();
    }
    co_return make_error(errc::conflict, "The matching content kept changing meanwhile; retry");
}

} // namespace depot::registry
