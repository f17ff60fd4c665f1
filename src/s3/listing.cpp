#include "s3/listing.hpp"

#include "common/hash.hpp"
#include "s3/errors.hpp"
#include "s3/names.hpp"
#include "s3/utf8.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace depot::s3 {

namespace {

/// The common prefix `key` rolls up to, or an empty view when it rolls up to none.
std::string_view common_prefix_of(std::string_view key, std::string_view prefix, std::string_view delimiter)
{
    if (delimiter.empty() || !key.starts_with(prefix))
        return {};
    const auto cut = key.find(delimiter, prefix.size());
    if (cut == std::string_view::npos)
        return {};
    return key.substr(0, cut + delimiter.size());
}

/// Tokens carry a version tag so that a token from some other system (or a future format) is rejected
/// rather than misread.
constexpr char token_version = '1';

} // namespace

scan_start listing_start(std::string_view prefix, std::string_view delimiter, std::string_view after)
{
    if (after < prefix)
        return scan_start{.key = std::string(prefix), .inclusive = true, .exhausted = false};
    if (!after.starts_with(prefix))
        return scan_start{.key = {}, .inclusive = false, .exhausted = true}; // past every key under prefix
    // Every key under a common prefix at or before `after` rolls up into an entry that is not after it.
    if (const auto common = common_prefix_of(after, prefix, delimiter); !common.empty()) {
        auto next = prefix_successor(common);
        if (next.empty())
            return scan_start{.key = {}, .inclusive = false, .exhausted = true};
        return scan_start{.key = std::move(next), .inclusive = true, .exhausted = false};
    }
    return scan_start{.key = std::string(after), .inclusive = false, .exhausted = false};
}

listing_page::listing_page(std::string prefix, std::string delimiter, std::size_t max_keys)
    : prefix_(std::move(prefix)), delimiter_(std::move(delimiter)), max_keys_(max_keys)
{}

listing_page::step listing_page::offer(std::string_view key)
{
    if (!key.starts_with(prefix_))
        return {.what = key < prefix_ ? action::skip : action::stop, .seek = {}};
    const auto common = common_prefix_of(key, prefix_, delimiter_);
    if (!common.empty() && !prefixes_.empty() && prefixes_.back() == common)
        return {.what = action::skip, .seek = {}};
    if (count_ == max_keys_) {
        // max-keys=0 lists nothing and is not truncated, as S3.
        truncated_ = max_keys_ > 0;
        return {.what = action::stop, .seek = {}};
    }
    ++count_;
    if (common.empty()) {
        last_ = key;
        return {.what = action::content, .seek = {}};
    }
    prefixes_.emplace_back(common);
    last_ = common;
    return {.what = action::common_prefix, .seek = prefix_successor(common)};
}

std::string encode_continuation_token(std::string_view last)
{
    std::string raw;
    raw.reserve(last.size() + 1);
    raw.push_back(token_version);
    raw.append(last);
    return to_base64(raw);
}

result<std::string> decode_continuation_token(std::string_view token)
{
    auto raw = from_base64(token);
    if (!raw || raw->empty() || raw->front() != token_version || raw->size() - 1 > max_key_bytes ||
        !is_valid_utf8(std::string_view(*raw).substr(1)))
        return argument_error(errc::invalid_argument, "The continuation token provided is incorrect",
                              "continuation-token", token);
    return raw->substr(1);
}

result<std::size_t> parse_max_keys(std::optional<std::string_view> value, std::string_view name,
                                   std::size_t limit)
{
    if (!value)
        return limit;
    std::int32_t n = 0;
    const auto* begin = value->data();
    const auto* end = begin + value->size();
    const auto [ptr, ec] = std::from_chars(begin, end, n);
    if (value->empty() || ec != std::errc() || ptr != end || n < 0 || value->front() == '+')
        return argument_error(errc::invalid_argument,
                              "Provided " + std::string(name) + " not an integer or within integer range",
                              name, *value);
    return std::min(static_cast<std::size_t>(n), limit);
}

} // namespace depot::s3
