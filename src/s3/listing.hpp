#pragma once
/// \file
/// The pure part of ListObjects/ListObjectsV2/ListObjectVersions: where a page's index scan starts,
/// folding scanned keys into Contents and CommonPrefixes under max-keys, the seek past a whole "directory"
/// once its common prefix is out, continuation tokens and max-keys parsing. The database layer runs the
/// scans; these functions decide what they mean.
///
/// Typical use for one page:
///
///     auto start = listing_start(prefix, delimiter, after);  // after: marker / start-after / token
///     listing_page page(prefix, delimiter, max_keys);
///     scan keys from start.key (>= when start.inclusive, else >), below prefix_successor(prefix):
///         auto step = page.offer(key);
///         content -> keep the row; common_prefix -> re-scan from step.seek (inclusive), or stop when
///         step.seek is empty; skip -> continue; stop -> done
///     page.truncated(), page.common_prefixes(), page.last() give IsTruncated, CommonPrefixes and the
///     NextMarker / NextContinuationToken.

#include "common/result.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::s3 {

/// Where a listing page's scan begins.
struct scan_start
{
    std::string key;        ///< the bound
    bool inclusive = false; ///< scan keys >= key (true) or > key (false)
    bool exhausted = false; ///< nothing can follow: the page is empty and not truncated
};

/// The start of a page listing keys under `prefix` that come after `after` (Marker, StartAfter or the
/// decoded continuation token: the last key or common prefix of the previous page; empty for the first
/// page). When `after` falls inside a common prefix (for example it is the common prefix "photos/" that
/// ended the previous page), the whole prefix is skipped, since S3 returns each entry after the marker once.
scan_start listing_start(std::string_view prefix, std::string_view delimiter, std::string_view after);

/// Accumulates one listing page from keys offered in ascending byte order.
class listing_page
{
public:
    /// What the scan should do with the key just offered.
    enum class action
    {
        content,       ///< the key is listed in Contents: keep its row
        common_prefix, ///< the key opened a new common prefix: continue the scan from `seek`
        skip,          ///< the key is not listed (before the prefix, or inside the current common prefix)
        stop,          ///< the page is complete; `truncated()` tells whether more entries follow
    };

    struct step
    {
        action what = action::skip;
        /// For common_prefix: the inclusive bound that skips every key under the prefix in one seek
        /// (`prefix_successor` of it); empty when no key can follow it, in which case the scan can end.
        std::string seek;
    };

    /// `max_keys` counts Contents and CommonPrefixes together, as S3 does. An empty delimiter disables
    /// folding into common prefixes.
    listing_page(std::string prefix, std::string delimiter, std::size_t max_keys);

    /// Offers the next key of the scan. Keys must arrive in strictly ascending byte order.
    step offer(std::string_view key);

    /// Distinct common prefixes, in order.
    const std::vector<std::string>& common_prefixes() const noexcept { return prefixes_; }
    /// Entries (contents and common prefixes) on the page.
    std::size_t count() const noexcept { return count_; }
    /// True once a key was offered beyond max-keys: IsTruncated.
    bool truncated() const noexcept { return truncated_; }
    /// The last key or common prefix on the page: NextMarker, and what the continuation token encodes.
    const std::string& last() const noexcept { return last_; }

private:
    std::string prefix_;
    std::string delimiter_;
    std::size_t max_keys_;
    std::vector<std::string> prefixes_;
    std::size_t count_ = 0;
    bool truncated_ = false;
    std::string last_;
};

/// An opaque ListObjectsV2 continuation token for the position `last` (see `listing_page::last`).
std::string encode_continuation_token(std::string_view last);

/// The position a continuation token stands for. Errors: invalid_argument (ArgumentName
/// continuation-token) for anything `encode_continuation_token` did not produce.
result<std::string> decode_continuation_token(std::string_view token);

/// The default and the largest page size of S3 listings.
inline constexpr std::size_t max_list_keys = 1000;

/// Parses max-keys (or max-uploads, max-parts: pass the parameter `name`). Absent gives `limit`; a decimal
/// integer from 0 up to 2^31-1 is accepted and clamped to `limit`. Errors: invalid_argument (ArgumentName
/// `name`) for a negative, non-numeric or out-of-range value.
result<std::size_t> parse_max_keys(std::optional<std::string_view> value, std::string_view name = "max-keys",
                                   std::size_t limit = max_list_keys);

} // namespace depot::s3
