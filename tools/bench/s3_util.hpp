#pragma once
/// \file
/// Pure helpers of depot-bench's S3 client: generated object contents, key names and the little XML
/// scanning the benchmark needs (UploadId, continuation tokens, key counts, error codes).

#include "options.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace depot::bench {

/// Object contents. `random`: a random pool whose every 64 KiB block is stamped with a per-run nonce, the
/// object id and the offset, so no two objects (and no two blocks) are equal. `fixed`: the same pool
/// without stamps, identical for every object of every run with the same seed.
class content_generator
{
public:
    content_generator(content_kind kind, std::uint64_t seed);

    /// Writes bytes [offset, offset + out.size()) of object `object_id` into `out`.
    void fill(std::uint64_t object_id, std::uint64_t offset, std::span<char> out) const;

private:
    content_kind kind_;
    std::uint64_t nonce_;
    std::vector<char> pool_;
};

/// The text between the first <tag> and </tag> in `xml`, with the five predefined XML entities decoded;
/// empty when absent.
std::string xml_value(std::string_view xml, std::string_view tag);

/// Number of <tag> elements in `xml`.
std::size_t xml_count(std::string_view xml, std::string_view tag);

/// The key of object `id` under `prefix`: "prefix/o0000000042" (zero-padded, so listings are in id order).
std::string object_key(std::string_view prefix, std::uint64_t id);

} // namespace depot::bench
