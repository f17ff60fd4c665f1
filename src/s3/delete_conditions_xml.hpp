#pragma once
/// \file
/// The conditions of a conditional DeleteObjects: each <Object>'s ETag, LastModifiedTime and Size elements.

#include "common/result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::s3 {

/// One <Object>'s conditions, as sent (trimmed; validated by the caller). Absent elements are nullopt.
struct delete_object_conditions
{
    std::optional<std::string> etag;
    std::optional<std::string> last_modified_time;
    std::optional<std::string> size;
};

/// The conditions of every <Object> of a DeleteObjects body, in the order of parse_delete_objects's objects.
/// Call it on a body parse_delete_objects accepted. Errors: malformed_xml.
result<std::vector<delete_object_conditions>> parse_delete_objects_conditions(std::string_view body);

} // namespace depot::s3
