#pragma once
/// \file
/// The S3 error table: for every `depot::errc`, the S3 `Code`, the HTTP status and a default message, and
/// the XML body S3 sends with an error. This is the only place that maps errors to S3; the server looks
/// every failure up here. Messages follow the wording of the AWS "Error responses" reference.

#include "common/error.hpp"

#include <string>
#include <string_view>

namespace depot::s3 {

/// How one `errc` is reported over S3.
struct error_mapping
{
    std::string_view code;    ///< S3 `Code`, e.g. "NoSuchBucket"
    unsigned status = 500;    ///< HTTP status code
    std::string_view message; ///< `Message` used when the error carries none
};

/// The S3 mapping of `code`. Total: every enumerator has an entry. The returned strings are static.
error_mapping lookup(errc code) noexcept;

/// A resolved S3 error response: everything the server needs to answer a failed request.
struct error_info
{
    std::string_view code; ///< static string from the table
    unsigned status = 500;
    std::string message;
    std::string argument_name;  ///< reported as ArgumentName when not empty
    std::string argument_value; ///< reported as ArgumentValue when `argument_name` is not empty
};

/// Resolves `err` through the table. The message is the error's own, or the table's default when empty.
/// `err.argument` is either "Name" or "Name=Value" (see `argument_error`); it fills ArgumentName and
/// ArgumentValue.
error_info describe(const error& err);

/// Builds an error that names the offending request argument and its value, as S3 does for
/// InvalidArgument ("max-keys", "abc"). Encodes them as "name=value" in `error::argument`.
error argument_error(errc code, std::string message, std::string_view name, std::string_view value);

/// The S3 XML error body:
/// `<?xml ...?><Error><Code/><Message/>[<ArgumentName/><ArgumentValue/>]<Resource/><RequestId/></Error>`.
/// `resource` is the request path (e.g. "/bucket/key"); all text is XML-escaped. Responses to HEAD and
/// 304 responses carry no body, which is the caller's concern.
std::string error_xml(const error_info& info, std::string_view resource, std::string_view request_id);

} // namespace depot::s3
