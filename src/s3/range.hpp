#pragma once
/// \file
/// Byte ranges: the `Range` header of GetObject/HeadObject (RFC 7233, single range only, as S3) and
/// `x-amz-copy-source-range` of UploadPartCopy, resolved against an object's size, plus the
/// `Content-Range` values that answer them.

#include "common/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace depot::s3 {

/// An inclusive, non-empty byte range [first, last] within an object.
struct byte_range
{
    std::uint64_t first = 0;
    std::uint64_t last = 0;

    std::uint64_t length() const noexcept { return last - first + 1; }
    friend bool operator==(const byte_range&, const byte_range&) = default;
};

/// Resolves a `Range` header against an object of `size` bytes, the way S3 does:
/// - nullopt (serve the whole object with 200): the header is empty, is not a "bytes" range, is
///   syntactically invalid (including "bytes=5-2"), or names several ranges ("bytes=0-1,4-5");
/// - a range (serve it with 206): "bytes=a-b" (b clamped to size-1), "bytes=a-", "bytes=-n" (the last n
///   bytes, the whole object when n >= size);
/// - invalid_range (416 with `Content-Range: bytes */size`): a is at or past the end, a suffix of zero
///   bytes ("bytes=-0"), or any range of an empty object.
result<std::optional<byte_range>> parse_range(std::string_view header, std::uint64_t size);

/// Resolves `x-amz-copy-source-range` against the source object's size. Only "bytes=first-last" with
/// first <= last is accepted. Errors: invalid_argument (ArgumentName x-amz-copy-source-range) for any
/// other form; invalid_range when the range does not lie within the source.
result<byte_range> parse_copy_source_range(std::string_view header, std::uint64_t source_size);

/// The `Content-Range` of a 206 response: "bytes 0-9/100".
std::string content_range(const byte_range& range, std::uint64_t size);

/// The `Content-Range` of a 416 response: "bytes */100".
std::string unsatisfied_content_range(std::uint64_t size);

} // namespace depot::s3
