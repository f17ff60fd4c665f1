#pragma once
/// \file
/// S3's tag sets (object and bucket tagging): the rules a set must follow, and the x-amz-tagging header
/// form. The XML form (the Tagging document of PutObjectTagging and PutBucketTagging) is parsed by
/// s3::parse_tagging (s3/xml.hpp), which applies the same rules.

#include "common/result.hpp"
#include "s3/types.hpp"

#include <cstddef>
#include <string_view>
#include <vector>

namespace depot::s3 {

/// The maximum number of tags on an object, and on a bucket.
inline constexpr std::size_t max_object_tags = 10;
inline constexpr std::size_t max_bucket_tags = 50;

/// S3's rules for a tag set, as S3 words its refusals (all invalid_tag): keys of 1 to 128 and values of up
/// to 256 Unicode characters (text PostgreSQL can store: UTF-8 without NUL), no key starting with "aws:",
/// no key twice, at most `max_tags` tags.
result<void> check_tag_set(const std::vector<tag>& tags, std::size_t max_tags);

/// The x-amz-tagging header of PutObject, CreateMultipartUpload and CopyObject: URL query form
/// ("k1=v1&k2=v2", percent-encoded, '+' a space; a key without '=' has an empty value), checked with
/// check_tag_set for an object. An empty header is an empty set. Errors: invalid_argument for a bad escape
/// or a key given twice (S3's message for the header), invalid_tag as check_tag_set.
result<std::vector<tag>> parse_tagging_header(std::string_view header);

} // namespace depot::s3
