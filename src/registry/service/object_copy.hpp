#pragma once
/// \file
/// The step CopyObject and snapshot restore share: inside the caller's transaction, a new current version
/// of a key that references the blobs of an existing version (no bytes move). Kept out of
/// object_service.hpp so that callers composing it into larger transactions do not rebuild every user of
/// the service.

#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/service/object_service.hpp"
#include "registry/vocabulary.hpp"

#include <boost/asio/awaitable.hpp>
#include <string>
#include <vector>

namespace depot::registry {

/// Inside a transaction that holds the target bucket's versioning lock (`lock_bucket_versioning`, whose
/// result is `mode`): copies version `req.expected_source_row` to `req.key` of `req.target`. Blobs the
/// replaced version released are appended to `unreferenced` for removal after the commit. Errors:
/// no_such_key (the source version is gone, or is no longer current when not pinned; or If-Match on a
/// target key without a current version), precondition_failed (`req.if_match` / `req.if_none_match` do not
/// hold for the target key).
asio::awaitable<result<object_version>> copy_version_in(pg::connection& c, versioning_mode mode,
                                                        const copy_object_request& req,
                                                        std::vector<std::string>& unreferenced);

} // namespace depot::registry
