#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// Steps on object version rows shared by the object and multipart services; all run inside the caller's
/// transaction.

#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/types.hpp"
#include "registry/vocabulary.hpp"

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

/// A tag set as stored (object_versions.tags, multipart_uploads.tags, buckets.tags: a JSON array of
/// [key, value] pairs, order kept).
std::string tags_json(const std::vector<s3::tag>& tags);
std::vector<s3::tag> tags_from_json(std::string_view text);

/// Locks the bucket row against deletion for the transaction; false when the bucket is gone.
asio::awaitable<bool> lock_bucket(pg::connection& c, std::int64_t bucket_id);

// versioning_mode, versioning_mode_of and is_valid_version_id: registry/vocabulary.hpp.

/// lock_bucket that also returns the bucket's versioning mode, read under the same lock (a concurrent
/// PutBucketVersioning waits for the write to commit), and takes the bucket's write lock shared (a snapshot
/// waits for the write to commit: see lock_bucket_writes); nullopt when the bucket is gone.
asio::awaitable<std::optional<versioning_mode>> lock_bucket_versioning(pg::connection& c,
                                                                       std::int64_t bucket_id);

/// lock_bucket_versioning in two halves, for a caller that sends it with other statements (query_all).
pg::statement lock_bucket_versioning_statement(std::int64_t bucket_id);
std::optional<versioning_mode> locked_versioning(const pg::result_set& rs);
/// Whether the bucket emits object events, read under that statement's lock (a concurrent change waits for
/// the write to commit).
bool locked_object_events(const pg::result_set& rs);

/// Takes the bucket's write lock exclusively for the transaction: waits for every write in flight on the
/// bucket (they hold it shared from lock_bucket_versioning until they commit) and holds new ones back until
/// the commit. Unlike a row lock, the advisory lock queues fairly: a stream of writers cannot starve the
/// exclusive locker. False when the bucket is gone.
asio::awaitable<bool> lock_bucket_writes(pg::connection& c, std::int64_t bucket_id);

/// The id of every version created while versioning is enabled: 16 hex digits of its created_seq (so ids
/// sort by creation) followed by 16 random hex digits; 32 characters of [0-9a-f], URL-safe.
std::string make_version_id(std::int64_t seq);

/// The created_seq a non-null version id encodes (its row has this created_seq unless the version was
/// reinstated: see reinstate_version).
/// Precondition: is_valid_version_id(id) && id != "null".
std::int64_t seq_of_version_id(std::string_view id) noexcept;

struct current_version
{
    std::int64_t row = 0;
    std::string etag;
    bool is_delete_marker = false;
    std::string version_id;
};

/// Locks and returns the current version row of a key, if any.
asio::awaitable<std::optional<current_version>> lock_current(pg::connection& c, std::int64_t bucket_id,
                                                             std::string_view key);
/// One attempt of lock_current as a statement, for a caller that sends it with others (query_all), and its
/// outcome: the current row or none, or nullopt when the row was replaced while the statement waited for
/// its lock (then call lock_current, which looks again).
pg::statement lock_current_statement(std::int64_t bucket_id, std::string_view key);
std::optional<std::optional<current_version>> locked_current(const pg::result_set& rs);

/// S3 conditional writes (If-Match / If-None-Match) against the locked current version: precondition_failed,
/// or no_such_key for If-Match on a missing key.
result<void> check_write_conditions(const std::optional<std::string>& if_match,
                                    const std::optional<std::string>& if_none_match,
                                    const std::optional<current_version>& current);

/// Removes a version row from the bucket: a row that a snapshot of the bucket sees is kept, purged (hidden
/// from every live view; superseded now if it was current) with its blob references; any other row is
/// deleted and the references its segments held dropped, blobs left unreferenced appended to
/// `unreferenced` for removal after the commit. Returns the commit sequence number that superseded a kept
/// current row (the change's number), else 0.
asio::awaitable<std::int64_t> release_version(pg::connection& c, std::int64_t row,
                                              std::vector<std::string>& unreferenced);

/// Makes a superseded version row current again (its newer versions were deleted permanently). When a
/// snapshot taken since it was superseded exists, its past stays visible to older snapshots only through a
/// purged copy, and the row takes a new created_seq (its version id keeps naming it).
asio::awaitable<void> reinstate_version(pg::connection& c, std::int64_t row);

/// Where the next version of a key goes: its version id and, when the change already took its commit
/// sequence number (superseding the previous current version), that number; 0 = take a new one.
struct version_slot
{
    std::string version_id = "null";
    std::int64_t seq = 0;
};

/// Before a new current version (object or delete marker) of a locked key is inserted, retires the one it
/// replaces as the bucket's versioning mode says:
/// - unversioned: the current version is released (release_version: deleted, or purged when a snapshot
///   sees it);
/// - enabled: the current version is superseded and keeps its blob references; the new version gets a new
///   version id and the same commit sequence number;
/// - suspended: the key's 'null' version is released wherever it is in the history, a current version with
///   another id is superseded; the new version is the 'null' version.
/// Blobs left unreferenced are appended to `unreferenced`.
asio::awaitable<version_slot> retire_current(pg::connection& c, versioning_mode mode, std::int64_t bucket_id,
                                             std::string_view key,
                                             const std::optional<current_version>& current,
                                             std::vector<std::string>& unreferenced);

/// Inserts a version row from `v` (bucket, key, version_id, is_delete_marker, size, etag, sha256, owner,
/// headers, parts_count, checksum) with created_seq `seq` (0 = nextval); returns (row id, last_modified in
/// epoch milliseconds).
asio::awaitable<std::pair<std::int64_t, std::int64_t>>
insert_version(pg::connection& c, const object_version& v, std::int64_t seq = 0);

/// insert_version together with the version's manifest (insert_segments), as one statement returning
/// (row id, last_modified ms), for a caller that sends it with COMMIT (query_all). Emits no event: only for
/// buckets whose object events are off (locked_object_events).
pg::statement insert_version_statement(const object_version& v, std::int64_t seq,
                                       const std::vector<segment>& segments);

} // namespace depot::registry
