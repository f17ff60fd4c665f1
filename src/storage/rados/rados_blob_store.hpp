#pragma once
/// \file
/// The RADOS blob store: blobs striped over RADOS objects of one pool (and namespace) of a Ceph cluster,
/// through librados asynchronous I/O. The layout and the write, read and removal protocols are described
/// at the top of rados_blob_store.cpp.

#include "storage/blob_store.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace depot::storage {

struct rados_options
{
    /// ceph.conf to read; empty = librados's default search (CEPH_CONF, /etc/ceph/ceph.conf, ...).
    std::string conf_file;
    /// The cephx identity, as a full entity name.
    std::string user = "client.admin";
    /// Keyring file holding `user`'s key; empty = what the conf file says (`keyring =`).
    std::string keyring;
    /// The pool blobs live in. It must exist: the store never creates pools.
    std::string pool = "depot";
    /// RADOS namespace inside the pool; several stores (e.g. tests) can share a pool with distinct ones.
    std::string ns;
    /// Bytes per RADOS object. A blob keeps the stripe size it was written with, so this may change between
    /// runs. At least 4 KiB.
    std::uint64_t stripe_size = 4 << 20;
    /// Stripes a writer or reader keeps in flight, which also bounds its memory: a writer buffers at most
    /// `window` stripes, a reader reads ahead at most `window` stripes. At least 1.
    unsigned window = 8;
    /// Bytes of stripe writes in flight over all writers together (0 = only each writer's window bounds
    /// them). Together with one stripe being filled per writer this bounds an upload's memory: 16 uploads
    /// need 16 stripes plus this, not 16 windows. Raised to the stripe size when smaller.
    std::uint64_t write_budget = 64 << 20;
    /// How long one RADOS operation may take before it fails with errc::unavailable (an OSD or monitor
    /// outage), and the timeout of the initial connection. Whole seconds; rounded up.
    std::chrono::milliseconds op_timeout{30000};
};

/// Connects to the cluster and opens the pool. Blocks the calling thread for the connection (at most about
/// `op_timeout`): call it before serving. Throws std::invalid_argument for bad options and
/// std::runtime_error, naming the conf file, user and pool, when the cluster cannot be reached, the
/// credentials are refused or the pool does not exist.
///
/// The store is thread-safe; one librados client and one I/O context are shared by every operation.
/// Writers and readers keep that client alive, so the store may be destroyed before them.
std::unique_ptr<blob_store> make_rados_blob_store(rados_options options);

/// Counters of one RADOS store since it was made, for tests and metrics.
struct rados_store_stats
{
    std::uint64_t stripe_writes = 0; ///< stripe objects written (each one aio write)
    std::uint64_t inline_writes = 0; ///< blobs written whole into their head at commit (one operation)
    std::uint64_t stripe_reads = 0;  ///< stripe reads issued (each one aio read of one object's range)
    std::uint64_t head_reads = 0;    ///< head (manifest) reads: open, stat, remove, list, remove_incomplete
    /// The most stripe writes one writer had in flight at once, and the most stripe reads one reader had.
    unsigned peak_writes_in_flight = 0;
    unsigned peak_reads_in_flight = 0;
    /// The most stripe-write bytes in flight at once over all writers, and how often a writer waited for the
    /// write budget (both 0 without one).
    std::uint64_t peak_write_bytes = 0;
    std::uint64_t write_budget_waits = 0;
};

/// The counters of `store` if make_rados_blob_store made it, nullopt for any other store. Thread-safe.
std::optional<rados_store_stats> rados_stats(const blob_store& store);

} // namespace depot::storage
