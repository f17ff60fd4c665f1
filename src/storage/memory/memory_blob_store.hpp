#pragma once
#include "storage/blob_store.hpp"

namespace depot::storage {

/// A blob store in process memory, for unit tests. Thread-safe.
std::unique_ptr<blob_store> make_memory_blob_store();

} // namespace depot::storage
