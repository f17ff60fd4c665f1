#pragma once
/// \file
/// Entity tags as S3 writes them. Depot stores ETags bare (hex, or hex-N for multipart objects) and quotes
/// them on the wire: in the ETag header and in XML (`<ETag>&quot;..&quot;</ETag>`).

#include "common/result.hpp"

#include <span>
#include <string>
#include <string_view>

namespace depot::s3 {

/// `abc` -> `"abc"`.
std::string quote_etag(std::string_view bare);

/// Removes surrounding whitespace, a weak-validator prefix `W/` and one pair of double quotes, so that
/// `"abc"`, `W/"abc"` and `abc` all give `abc`.
std::string_view unquote_etag(std::string_view etag) noexcept;

/// The ETag S3 gives a multipart object: hex MD5 of the concatenated binary MD5s of the parts, then "-"
/// and the number of parts. `part_etags` are the parts' bare ETags (32 hex digits each), in part order.
/// Errors: invalid_part when a part ETag is not an MD5 in hex; invalid_argument when there are none.
result<std::string> multipart_etag(std::span<const std::string> part_etags);

} // namespace depot::s3
