#pragma once
#include "storage/blob_store.hpp"

namespace depot::storage {

/// A blob store in process memory, for unit tests. Thread-safe. A writer destroyed without commit() or
/// abort() stays registered as a leftover (without its bytes) until remove_incomplete() reclaims it, so a
/// test can check that the code under test aborts what it does not commit:
/// `remove_incomplete(now + 1h)` returns 0 exactly when every unfinished writer was aborted.
std::unique_ptr<blob_store> make_memory_blob_store();

} // namespace depot::storage
