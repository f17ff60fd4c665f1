#pragma once
/// \file
/// Server-side encryption as a blob-store decorator: blobs written through it are stored in the sealed
/// format (sealed_format.hpp) in the store it wraps, and read back decrypted. Sizes, offsets and lengths
/// are plaintext ones everywhere (create's size hint, writer size, open, stat, list); ids are the inner
/// store's. The wrapping key is fixed per decorator: the SSE master key (SSE-S3) or a key derived from a
/// customer key (SSE-C); it is cheap to make one per request.
///
/// Reading a range costs a stat and a read of the header before the covered segments stream, each
/// decrypted and authenticated before any of its bytes is returned: a tampered, reordered or truncated blob
/// is an io_error ("failed authentication"), never wrong bytes. A blob that was not written through a
/// sealed store, or under another key, fails the same way.

#include "storage/blob_store.hpp"

#include <memory>
#include <string>

namespace depot::storage {

/// `inner` must outlive the decorator and every writer and reader it hands out. `wrapping_key` is 32 raw
/// bytes (std::invalid_argument otherwise).
std::unique_ptr<blob_store> make_sealed_blob_store(blob_store& inner, std::string wrapping_key);

} // namespace depot::storage
