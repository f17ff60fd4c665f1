#pragma once
/// \file
/// Creating an object from a digest (REST createObjectFromDigest, upload avoidance): a new version of a key
/// that references the blobs of an object the caller can already read with that SHA-256 and size. No bytes
/// move. Only content the caller can read may be referenced: a digest is not a capability.

#include "common/result.hpp"
#include "registry/service/buckets.hpp"
#include "registry/service/catalog.hpp"
#include "registry/service/object_service.hpp"
#include "registry/vocabulary.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace depot::registry {

namespace asio = boost::asio;

struct digest_copy_request
{
    std::string owner_id; ///< the caller: content in buckets they own counts, and the copy is theirs
    std::string sha256;   ///< raw
    std::uint64_t size = 0;
    /// A scoped credential's area: content found only outside it is as absent as content nobody stores.
    const scope_area* within = nullptr;
    const bucket* target = nullptr;
    std::string key;
    /// Replaces the source's headers and metadata when set.
    std::optional<object_headers> headers;
    /// The caller's authorization of reading a source found (its bucket's policy): a source it refuses is
    /// as absent as content nobody stores. None: every source found may be read.
    std::function<result<void>(const bucket& source_bucket, std::string_view source_key)> may_read;
};

/// Copies a matching object's references to `req.key`. The object found can be overwritten or deleted
/// before the copy commits (a concurrent push of the same content under several keys does exactly that);
/// then another one is looked for, a few times. Errors: not_found (no object the caller can read has this
/// content), conflict (the matching content kept changing), and copy_object's other errors. The three
/// collaborators must outlive the call.
asio::awaitable<result<object_version>> copy_from_digest(const audit_context& who, catalog_service& catalog,
                                                         bucket_service& buckets, object_service& objects,
                                                         const digest_copy_request& req);

} // namespace depot::registry
