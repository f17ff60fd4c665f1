#pragma once
/// \file
/// Steps shared by the S3 operations that address object versions: the versionId parameter, the
/// x-amz-version-id header, and S3's answers for delete markers.

#include "registry/types.hpp"
#include "server/context.hpp"

#include <optional>
#include <string>

namespace depot::server::s3op {

/// Validates a version id (a query parameter or x-amz-copy-source's versionId): invalid_argument
/// "Invalid version id specified" (ArgumentName `argument`) unless it is "null" or an id Depot issued.
result<void> check_version_id(std::string_view id, std::string_view argument = "versionId");

/// The request's ?versionId=, validated; nullopt when absent.
result<std::optional<std::string>> version_id_of(const request_context& ctx);

/// x-amz-version-id of a read: the version's id, and "null" for the null version of a versioned bucket
/// (a never-versioned bucket sends none).
void set_version_header(response& res, const registry::bucket& bucket, const registry::object_version& v);

/// S3's answer when a read finds a delete marker: 404 NoSuchKey when it is the current version (no
/// versionId), 405 MethodNotAllowed when the request named it; both with x-amz-delete-marker: true and the
/// marker's x-amz-version-id (and Last-Modified for 405).
response delete_marker_response(const request_context& ctx, const registry::object_version& marker,
                                bool named);

} // namespace depot::server::s3op
