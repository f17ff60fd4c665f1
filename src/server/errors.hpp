#pragma once
#include "common/error.hpp"
#include "server/context.hpp"

#include <exception>

namespace depot::server {

/// Renders an error as S3 does: status and XML body from the one error table (s3/errors.hpp), with the
/// request id. HEAD responses carry no body, so the code travels in x-amz-error-code instead.
/// Bucket errors carry a BucketName element and NoSuchKey a Key element, as S3's do.
response s3_error_response(const error& err, std::string_view resource, std::string_view request_id,
                           bool head, std::string_view bucket = {}, std::string_view key = {});

/// What a request answers when its handler threw: a database that cannot be reached is retriable
/// (unavailable: 503), anything else is internal (500). Logs the exception with the request id.
error error_from_exception(const std::exception& e, std::string_view request_id);

} // namespace depot::server
