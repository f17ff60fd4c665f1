#pragma once
#include "storage/blob_store.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <filesystem>

namespace depot::storage {

struct localfs_options
{
    /// Root directory; created if missing.
    std::filesystem::path root;
    /// Threads for blocking filesystem calls (never run on I/O threads); 0 means 1.
    unsigned blocking_threads = 4;
    /// fsync file and directory on commit. Off only for benchmarks of the rest of the stack.
    bool fsync = true;
};

/// A blob store in a local directory. See localfs_blob_store.cpp for the on-disk layout and write protocol.
/// Creates `root`, `root/blobs` and `root/tmp` if missing (blocking; call it at startup) and throws
/// std::filesystem::filesystem_error if it cannot. Thread-safe; writers and readers keep the store's thread
/// pool alive, so the store may be destroyed before them. Its last owner must not be released on one of the
/// store's own pool threads (nothing the store posts there holds one).
std::unique_ptr<blob_store> make_localfs_blob_store(localfs_options options);

} // namespace depot::storage
