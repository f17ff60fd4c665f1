#pragma once
/// \file
/// Snapshots: a named commit sequence number over a bucket, optionally restricted to a key prefix.
///
/// Creating one is a single constant-size INSERT whatever the number of objects: reading "as of" the
/// snapshot is a filter on the version rows' created_seq / superseded_seq. A row a snapshot sees survives
/// its removal from the live bucket as a purged row (see release_version); deleting a snapshot releases the
/// purged rows no other snapshot of the bucket sees, and with them their blob references. Restoring copies
/// references into a bucket as new current versions; no byte moves.
///
/// Snapshot creation and deletion take the bucket's write lock exclusively (lock_bucket_writes; writers hold
/// it shared while they publish), so a snapshot's number splits the bucket's changes into "committed
/// before" and "after", and a deletion never races a writer that keeps a row for the snapshot being deleted.

#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/service/object_service.hpp"
#include "registry/types.hpp"
#include "storage/blob_store.hpp"

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

/// Keys starting with this are the read-only S3 view of a bucket's snapshots
/// (`.snapshots/<name>/<key>`): nothing can be stored under it.
inline constexpr std::string_view snapshot_key_prefix = ".snapshots/";

/// True for keys inside the reserved snapshot view (and for ".snapshots" itself).
bool is_snapshot_key(std::string_view key) noexcept;

/// The key a snapshot view path `.snapshots/<name>/<key>` reads, <key> ("" when it names none).
std::string_view key_below_snapshot_root(std::string_view view_key) noexcept;

/// The live key a bucket key reads: key_below_snapshot_root for a snapshot view path, `key` otherwise.
std::string_view live_key_of(std::string_view key) noexcept;

/// 1 to 63 characters of A-Z, a-z, 0-9, '.', '_', '-', starting with a letter or digit (no '/': a name
/// is one key segment of the S3 view).
bool valid_snapshot_name(std::string_view name) noexcept;

struct restore_request
{
    std::int64_t bucket_id = 0; ///< the snapshot's bucket
    std::string snapshot;
    const bucket* target = nullptr;
    /// Restores only the snapshot's keys starting with this; nullopt = the snapshot's prefix.
    std::optional<std::string> prefix;
    /// Replaces `prefix` at the start of each restored key; nullopt = keys keep their names.
    std::optional<std::string> target_prefix;
    std::string owner_id;
    /// The caller's authorization of each key restored (the source key read, the target key written, and
    /// whether the copy carries the source's tags), asked for every key before the first copy; its first
    /// refusal is the restore's error. None: all may.
    std::function<result<void>(std::string_view source_key, std::string_view target_key, bool copies_tags)>
        check;
};

struct restore_outcome
{
    std::int64_t objects = 0;
    std::int64_t bytes = 0; ///< logical bytes referenced by the new versions
};

class snapshot_service
{
public:
    /// All must outlive the service.
    snapshot_service(pg::pool& pool, storage::blob_store& store, object_service& objects)
        : pool_(pool), store_(store), objects_(objects)
    {}

    /// Errors: invalid_argument (name, prefix), already_exists (a snapshot of the bucket has this name),
    /// no_such_bucket.
    asio::awaitable<result<snapshot>> create(const audit_context& who, std::int64_t bucket_id,
                                             std::string_view name, std::string_view prefix,
                                             std::string_view created_by);

    /// nullopt when the bucket has no snapshot of that name.
    asio::awaitable<std::optional<snapshot>> get(std::int64_t bucket_id, std::string_view name);

    /// Snapshots of a bucket by name after `after`, at most `limit`.
    asio::awaitable<std::vector<snapshot>> list(std::int64_t bucket_id, std::string_view after,
                                                std::size_t limit);

    /// Deletes a snapshot and releases the rows (and blob references) only it kept. `may_purge`: the
    /// caller's authorization of each key whose versions that deletes for good, asked before anything is
    /// deleted; its first refusal is the error and nothing changes (none: all may). Errors: not_found.
    asio::awaitable<result<void>> remove(const audit_context& who, std::int64_t bucket_id,
                                         std::string_view name,
                                         std::function<result<void>(std::string_view key)> may_purge = {});

    /// Copies the snapshot's objects (or those under `prefix`) into the target bucket as new current
    /// versions, taking references to the same blobs. Every target key is validated before the first copy.
    /// Errors: not_found (snapshot), invalid_argument / invalid_object_name (a target key), no_such_bucket.
    asio::awaitable<result<restore_outcome>> restore(const audit_context& who, restore_request request);

private:
    pg::pool& pool_;
    storage::blob_store& store_;
    object_service& objects_;
};

} // namespace depot::registry
