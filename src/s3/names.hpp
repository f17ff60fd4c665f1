#pragma once
/// \file
/// What S3 accepts as a bucket name, an object key and user metadata, and `prefix_successor`, the upper
/// bound of a prefix scan over UTF-8 keys in byte order.

#include "common/result.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace depot::s3 {

/// Validates a general purpose bucket name: 3 to 63 characters of a-z, 0-9, '.' and '-'; starting and
/// ending with a letter or digit; no ".."; not shaped like an IPv4 address; none of S3's reserved prefixes
/// (xn--, sthree-, amzn-s3-demo-) or suffixes (-s3alias, --ol-s3, .mrap, --x-s3, --table-s3).
/// Errors: invalid_bucket_name, with a message naming the rule that failed.
result<void> validate_bucket_name(std::string_view name);

/// The longest object key S3 accepts, in bytes of UTF-8.
inline constexpr std::size_t max_key_bytes = 1024;

/// Validates an object key: 1 to 1024 bytes of well-formed UTF-8 (no overlong forms, no surrogates) without
/// NUL. Errors: key_too_long (KeyTooLongError) above 1024 bytes; invalid_object_name otherwise.
result<void> validate_object_key(std::string_view key);

/// The smallest well-formed UTF-8 string that is greater, in byte order, than every string starting with
/// `prefix`; "" when there is none (the prefix is empty or only U+10FFFF). A scan for a prefix is then
/// `key >= prefix AND key < prefix_successor(prefix)`. Works by incrementing the last code point (skipping
/// the surrogate block) after dropping trailing U+10FFFF. When `prefix` is not well-formed UTF-8, only its
/// longest well-formed leading part is used, which still bounds every key starting with `prefix`.
std::string prefix_successor(std::string_view prefix);

/// The most user metadata S3 accepts on one object, in bytes.
inline constexpr std::size_t max_user_metadata_bytes = 2048;

/// Validates user metadata given as (name without "x-amz-meta-", value) pairs: the sum of the UTF-8 sizes
/// of every name and value may not exceed 2 KiB; every name must be an HTTP token and every value a valid
/// field value (header_values.hpp). Errors: invalid_argument (a bad name or value), metadata_too_large.
result<void> validate_user_metadata(std::span<const std::pair<std::string, std::string>> metadata);

} // namespace depot::s3
