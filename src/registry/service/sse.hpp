#pragma once
/// \file
/// Server-side encryption in the registry: how a write asks for it, how a blob's sealing is named in
/// `blobs.sealed`, the SSE-C key check stored in place of the customer's key, and the store view that reads
/// or writes a sealed blob. See docs/ARCHITECTURE.md, "Server-side encryption".

#include "common/result.hpp"
#include "registry/types.hpp"
#include "storage/blob_store.hpp"

#include <memory>
#include <string>
#include <string_view>

namespace depot::registry {

/// What a write asks for: nothing, SSE-S3 ("AES256"), or SSE-C with the customer's 32-byte key.
struct sse_spec
{
    sealing mode = sealing::none;
    std::string customer_key; ///< raw, SSE-C only; never stored or logged
};

/// "AES256", "SSE-C" or "" — object_versions.sse.
std::string_view sse_name(sealing mode) noexcept;
/// The inverse of sse_name (anything else reads as none).
sealing sealing_of(std::string_view sse) noexcept;
/// blobs.sealed: "master", "customer", or "" for none.
std::string_view sealing_column(sealing mode) noexcept;
/// The inverse of sealing_column (anything else reads as none).
sealing sealing_from_column(std::string_view column) noexcept;

/// A random salt and HMAC-SHA256(salt, key): what is stored of an SSE-C key, enough to check it later.
std::string make_key_check(std::string_view customer_key);
/// Whether `customer_key` is the key `check` was made from (constant time).
bool key_matches(std::string_view check, std::string_view customer_key);

/// The ETag of a body (or part) whose MD5 is `md5` (raw) written with `mode`: its hex MD5, except under
/// SSE-C, where (as on AWS) it is not the MD5 of the plaintext, which would let anyone who can list the
/// bucket confirm a guess of the content: HMAC-SHA256(customer key, MD5), first 16 bytes, in hex.
std::string sse_etag(sealing mode, std::string_view customer_key, std::string_view md5);

/// The keys a read or write of sealed blobs may need.
struct sse_keys
{
    std::string master;   ///< the SSE master key (32 raw bytes), empty when none is configured
    std::string customer; ///< the request's SSE-C key, empty when it sent none
};

/// `store` itself for `mode` none, else a sealed view of it under the matching key. Errors: sse_unavailable
/// (server_side_encryption_unavailable: no master key), invalid_request (SSE-C without a key).
result<std::unique_ptr<storage::blob_store>> sealed_view(storage::blob_store& store, sealing mode,
                                                         const sse_keys& keys);

} // namespace depot::registry
