#pragma once
/// \file
/// Stripe buffers that writers reuse instead of allocating 4 MiB per stripe. A fresh buffer costs a page
/// fault and the kernel's zeroing for every 4 KiB of it: in a profile of 16 MiB UploadParts on RADOS that
/// was 7 % of depotd's CPU, for bytes that are overwritten at once. Internal to storage/rados.

#include <cstddef>
#include <mutex>
#include <rados/librados.hpp>
#include <vector>

namespace depot::storage::rados_detail {

/// Buffers of one size (the store's stripe size). Thread-safe: writers take and give on I/O threads, while
/// librados drops its references to buffers it has written on its own threads.
class stripe_buffers
{
public:
    /// Keeps at most `keep` idle buffers of `size` bytes (more than that are freed when librados lets go).
    stripe_buffers(std::size_t size, std::size_t keep) : size_(size), keep_(keep) {}

    std::size_t size() const noexcept { return size_; }

    /// A buffer of size() bytes (contents undefined) that nobody else references: an idle one whose last
    /// write has completed, or a new one. Write into it with copy_in() only: a reused buffer carries the
    /// crc32c values the messenger cached for its old bytes, which copy_in() drops and a memcpy through
    /// c_str() would not (the OSD then discards the message as corrupt and the write times out).
    ceph::bufferptr take();

    /// Hands back a buffer taken with take(). A write in flight may still reference it (a bufferlist given
    /// to librados shares it): take() reuses it only once that reference is gone.
    void give(ceph::bufferptr buffer);

    /// Idle buffers held (for tests).
    std::size_t held() const;

private:
    const std::size_t size_;
    const std::size_t keep_;
    mutable std::mutex mutex_;
    std::vector<ceph::bufferptr> idle_;
};

} // namespace depot::storage::rados_detail
