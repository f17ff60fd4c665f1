/// \file
/// Fuzzes Range and x-amz-copy-source-range parsing (src/s3/range.cpp).
///
/// Input: the first 8 bytes are the object size (little endian; a few high bits are masked so that both
/// small and huge objects occur), the rest is the header value. Invariants: an accepted range lies within
/// the object and is not empty; an error is invalid_range (or invalid_argument for the copy range); and the
/// range written back as "bytes=first-last" parses to itself.

#include "s3/range.hpp"

#include "check.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace {

using namespace depot;
using namespace depot::s3;

void check_within(const byte_range& r, std::uint64_t size)
{
    FUZZ_CHECK(r.first <= r.last);
    FUZZ_CHECK(r.last < size);
    FUZZ_CHECK(r.length() >= 1 && r.length() <= size);
}

std::string spec(const byte_range& r)
{
    return "bytes=" + std::to_string(r.first) + "-" + std::to_string(r.last);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 8)
        return 0;
    std::uint64_t object_size = 0;
    std::memcpy(&object_size, data, 8);
    // Mostly small sizes (the interesting boundaries), sometimes anything up to 2^64-1.
    if (!(object_size >> 63))
        object_size &= 0xffff;
    std::string_view header(reinterpret_cast<const char*>(data) + 8, size - 8);

    auto range = parse_range(header, object_size);
    if (range) {
        if (*range) {
            check_within(**range, object_size);
            (void)content_range(**range, object_size);
            auto again = parse_range(spec(**range), object_size);
            FUZZ_CHECK(again && *again && **again == **range);
        }
    } else {
        FUZZ_CHECK(range.error().code == errc::invalid_range);
        (void)unsatisfied_content_range(object_size);
    }

    auto copy = parse_copy_source_range(header, object_size);
    if (copy) {
        check_within(*copy, object_size);
        auto again = parse_copy_source_range(spec(*copy), object_size);
        FUZZ_CHECK(again && *again == *copy);
    } else {
        FUZZ_CHECK(copy.error().code == errc::invalid_range || copy.error().code == errc::invalid_argument);
    }
    return 0;
}
