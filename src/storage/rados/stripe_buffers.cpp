#include "storage/rados/stripe_buffers.hpp"

#include <utility>

namespace depot::storage::rados_detail {

ceph::bufferptr stripe_buffers::take()
{
    {
        std::lock_guard lock(mutex_);
        // raw_nref() == 1: only this pool references the buffer, so no write can still read it, and nobody
        // else can take a new reference (only the pool holds one to share).
        for (auto it = idle_.begin(); it != idle_.end(); ++it) {
            if (it->raw_nref() == 1) {
                ceph::bufferptr found = std::move(*it);
                *it = std::move(idle_.back());
                idle_.pop_back();
                return found;
            }
        }
    }
    return ceph::buffer::create_page_aligned(static_cast<unsigned>(size_));
}

void stripe_buffers::give(ceph::bufferptr buffer)
{
    if (buffer.raw_length() != size_)
        return;
    // A whole-buffer view again (the writer may have handed out a shorter range of it).
    buffer.set_offset(0);
    buffer.set_length(static_cast<unsigned>(size_));
    std::lock_guard lock(mutex_);
    if (idle_.size() < keep_)
        idle_.push_back(std::move(buffer));
}

std::size_t stripe_buffers::held() const
{
    std::lock_guard lock(mutex_);
    return idle_.size();
}

} // namespace depot::storage::rados_detail
