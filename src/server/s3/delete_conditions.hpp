#pragma once
/// \file
/// Conditional deletes at the S3 layer: the request's conditions, validated where they enter.

#include "common/result.hpp"
#include "registry/service/conditional_delete.hpp"

#include <optional>
#include <string_view>

namespace depot::server::s3op {

/// Fills `out` from the values of a conditional delete: If-Match (or <ETag>), x-amz-if-match-size (<Size>:
/// decimal bytes) and x-amz-if-match-last-modified-time (<LastModifiedTime>: an HTTP date or ISO 8601).
/// `size_name` and `last_modified_name` name the header or element in errors.
/// Errors: invalid_argument naming the malformed one.
result<void> delete_conditions_of(registry::delete_conditions& out, std::optional<std::string_view> if_match,
                                  std::optional<std::string_view> size,
                                  std::optional<std::string_view> last_modified, std::string_view size_name,
                                  std::string_view last_modified_name);

} // namespace depot::server::s3op
