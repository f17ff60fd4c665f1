// The stripe buffer pool of the RADOS writers: a buffer comes back only once nothing else references it.
#include "storage/rados/stripe_buffers.hpp"

#include <doctest/doctest.h>

using depot::storage::rados_detail::stripe_buffers;

TEST_CASE("a stripe buffer is reused once the write that shared it has let go, never while it holds it")
{
    stripe_buffers pool(64 << 10, 2);
    ceph::bufferptr first = pool.take();
    CHECK(first.length() == 64u << 10);
    const char* memory = first.c_str();

    // A write in flight: a bufferlist shares the first 100 bytes of the buffer.
    auto in_flight = std::make_unique<ceph::bufferlist>();
    in_flight->append(first, 0, 100);
    pool.give(std::move(first));
    CHECK(pool.held() == 1);

    ceph::bufferptr second = pool.take();
    CHECK(second.c_str() != memory); // still referenced by the write: a new buffer
    CHECK(second.length() == 64u << 10);

    in_flight.reset(); // the write completed and librados dropped its list
    ceph::bufferptr third = pool.take();
    CHECK(third.c_str() == memory); // reused, and whole again
    CHECK(third.length() == 64u << 10);
    CHECK(pool.held() == 0);
}

TEST_CASE("the pool keeps at most `keep` idle buffers and ignores buffers of another size")
{
    stripe_buffers pool(4096, 2);
    std::vector<ceph::bufferptr> taken;
    for (int i = 0; i < 3; ++i)
        taken.push_back(pool.take());
    for (auto& b : taken)
        pool.give(std::move(b));
    CHECK(pool.held() == 2);
    pool.give(ceph::bufferptr(1000));
    CHECK(pool.held() == 2);
}
