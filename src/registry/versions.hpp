#pragma once
/// \file
/// Steps on object version rows shared by the object and multipart services; all run inside the caller's
/// transaction.

#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/types.hpp"

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

/// User metadata as stored (a JSON array of [name, value] pairs, order kept).
std::string metadata_json(const object_headers& h);
std::vector<std::pair<std::string, std::string>> metadata_from_json(std::string_view text);

/// Locks the bucket row against deletion for the transaction; false when the bucket is gone.
asio::awaitable<bool> lock_bucket(pg::connection& c, std::int64_t bucket_id);

struct current_version
{
    std::int64_t row = 0;
    std::string etag;
    bool is_delete_marker = false;
};

/// Locks and returns the current version row of a key, if any.
asio::awaitable<std::optional<current_version>> lock_current(pg::connection& c, std::int64_t bucket_id,
                                                             std::string_view key);

/// S3 conditional writes (If-Match / If-None-Match) against the locked current version: precondition_failed,
/// or no_such_key for If-Match on a missing key.
result<void> check_write_conditions(const std::optional<std::string>& if_match,
                                    const std::optional<std::string>& if_none_match,
                                    const std::optional<current_version>& current);

/// Deletes a version row and drops the references its segments held; blobs left unreferenced are appended
/// to `unreferenced` for removal after the commit.
asio::awaitable<void> release_version(pg::connection& c, std::int64_t row,
                                      std::vector<std::string>& unreferenced);

/// Inserts a version row from `v` (bucket, key, size, etag, sha256, owner, headers, parts_count); returns
/// (row id, last_modified in epoch milliseconds).
asio::awaitable<std::pair<std::int64_t, std::int64_t>> insert_version(pg::connection& c,
                                                                      const object_version& v);

} // namespace depot::registry
