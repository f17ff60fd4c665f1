#pragma once
/// \file
/// A read cache in front of a blob store: a decorator that serves `open()` ranges from 1 MiB chunks held in
/// memory (an LRU bounded by bytes) and, optionally, in a directory on local disk (a second LRU bounded by
/// bytes).
///
/// - Keyed by blob id and chunk index. Blobs are immutable and content is deduplicated onto shared blobs
///   (registry/service/content.hpp: identical (SHA-256, size) content is one blob), so a blob id names
///   content: files that share content share cache entries, and nothing is ever invalidated, only evicted.
///   `remove()` drops the blob's chunks.
/// - Single flight: concurrent readers of a missing chunk wait (without polling) for the one fetch that fills
///   it, and all see its outcome.
/// - Disk tier: every chunk fetched from the inner store is also written to the directory (write-through), so
///   a chunk evicted from memory is read back from disk rather than from the inner store. The directory is
///   emptied at start (its files are a cache; nothing in them is trusted across restarts). Disk I/O runs on a
///   small thread pool of the decorator's own.
/// - Blob sizes learned through stat() (or a prefetch) are remembered, so a cached range is served without
///   any inner call.
/// - Writes, stat of unknown blobs, list and remove_incomplete pass through.
///
/// Metrics (in the given registry): depot_cache_hits_total{tier} (chunks served from memory or disk, a
/// reader that waited for another's fill counts as a memory hit), depot_cache_misses_total (chunks fetched
/// from the inner store), depot_cache_bytes{tier}, depot_cache_evictions_total{tier}.

#include "common/metrics.hpp"
#include "storage/blob_store.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace depot::storage {

struct cache_options
{
    /// Bytes of chunk data kept in memory; 0 disables the memory tier (chunks are then only passed through,
    /// or kept on disk).
    std::uint64_t memory_bytes = 256ull << 20;
    /// Directory of the disk tier; empty = no disk tier.
    std::string disk_dir;
    /// Bytes kept in the disk tier (0 with a directory = no disk tier).
    std::uint64_t disk_bytes = 0;
    /// Chunk size (tests use small chunks).
    std::uint64_t chunk_size = 1ull << 20;
};

/// Counters of one cache, for tests and logs.
struct cache_stats
{
    std::uint64_t memory_hits = 0;
    std::uint64_t disk_hits = 0;
    std::uint64_t misses = 0;
    std::uint64_t memory_bytes = 0;
    std::uint64_t disk_bytes = 0;
    std::uint64_t memory_evictions = 0;
    std::uint64_t disk_evictions = 0;
};

class cached_blob_store : public blob_store
{
public:
    /// Reads `[offset, offset + length)` of a blob into the cache (length clamped to the blob's end), chunk
    /// by chunk, and returns the number of bytes it covers. Errors are those of open() and read_some().
    virtual asio::awaitable<result<std::uint64_t>> prefetch(const blob_id& id, std::uint64_t offset = 0,
                                                            std::uint64_t length = UINT64_MAX) = 0;
    virtual cache_stats stats() const = 0;
    virtual const cache_options& options() const noexcept = 0;
};

/// Registers the cache's metric families (at zero), so /metrics exports them also when no cache is
/// configured. make_cached_blob_store does this itself.
void register_cache_metrics(metrics::registry& registry = metrics::default_registry());

/// Wraps `inner` (kept alive by the decorator and the readers it hands out). Creates (and empties) the disk
/// directory when there is one; throws std::runtime_error naming the directory if that fails. Thread-safe.
/// `registry` must outlive the decorator.
std::shared_ptr<cached_blob_store>
make_cached_blob_store(std::shared_ptr<blob_store> inner, cache_options options,
                       metrics::registry& registry = metrics::default_registry());

} // namespace depot::storage
