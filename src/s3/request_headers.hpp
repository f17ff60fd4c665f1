#pragma once
/// \file
/// The request headers of the S3 API that ask for a feature Depot does not have. Every header of the API
/// reference is either honoured by the action that reads it or refused here with 501 NotImplemented, never
/// silently ignored: a client that asked for encryption, a retention period or a storage class must not
/// get a 200 for an object stored without it. (Encryption headers are read by s3/sse.hpp; SSE-KMS
/// ones are refused here as well.) The dispatcher checks every S3 request's headers (after
/// authorization, before the handler); POST Object checks its form fields the same way. ACL headers
/// (x-amz-acl, x-amz-grant-*) are checked with the ACLs (server/s3/common.hpp check_acl_headers).
/// tests/e2e/test_request_headers.py enumerates the headers of botocore's S3 model against this table.

#include "common/result.hpp"

#include <string_view>

namespace depot::s3 {

/// ok() when Depot honours `name` with `value` or does not know the header (unknown headers are ignored,
/// as on S3). Errors: not_implemented naming the header for a feature Depot lacks;
/// invalid_storage_class for an x-amz-storage-class that is no storage class; invalid_argument for a value
/// the header cannot have (`name` as the argument). `name` is compared without regard to case.
result<void> check_request_header(std::string_view name, std::string_view value);

} // namespace depot::s3
