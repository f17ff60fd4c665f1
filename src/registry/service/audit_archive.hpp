#pragma once
/// \file
/// Audit retention: moving the rows written before a cut into a bucket as one JSON Lines object and then out
/// of the table (audit_archive() in schema/0008_audit.sql, which keeps the chain anchor so what remains still
/// verifies). Shared by `depotctl audit archive` and depotd's retention setting (--audit-retention with
/// --audit-archive-bucket, run by the cleanup loop).
///
/// Protocol, in this order: take the installation-wide archive lock (a transaction-scoped PostgreSQL
/// advisory lock, so one archive runs at a time across every depotd and depotctl, and a crashed holder
/// releases it with its connection); find the last row before the cut; verify the whole chain (only an intact
/// chain leaves the database); write the rows as `<prefix>audit-FIRST-LAST.jsonl` with an ordinary PutObject
/// (so the object is complete and committed before anything is removed); then, in the lock's transaction,
/// remove the rows and append an `audit.archive` row naming the object. Any failure before that last
/// step leaves every row in place.

#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/types.hpp"
#include "storage/blob_store.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <string>

namespace depot::registry {

struct audit_archive_request
{
    std::string before;                ///< ISO 8601: the rows written before this are archived
    std::string bucket;                ///< name of the bucket the archive object goes to (must exist)
    std::string key_prefix = "audit/"; ///< the object is <key_prefix>audit-FIRST-LAST.jsonl
    /// At most this many rows per archive (the oldest ones; the rest wait for the next run). 0 = no limit.
    std::int64_t max_rows = 0;
};

struct audit_archive_outcome
{
    bool busy = false;         ///< another archive held the lock; nothing was done
    std::int64_t archived = 0; ///< rows removed (0 and no object when nothing was older than `before`)
    std::int64_t first_row = 0;
    std::int64_t last_row = 0;
    std::string bucket;
    std::string key;
};

/// Archives the rows written before `req.before` (see the file comment), done by `who` ("system" in depotd's
/// cleanup loop, "depotctl" from depotctl). Errors,
/// all with every row left in place: invalid_argument (argument "before") for a bad time; no_such_bucket when
/// the bucket does not exist; conflict when the chain does not verify (the message names the row); whatever
/// PutObject returns when the object cannot be written. Throws pg::error and blob-store failures like any
/// repository call; those leave the rows too.
boost::asio::awaitable<result<audit_archive_outcome>> archive_audit_rows(const audit_context& who,
                                                                         pg::pool& pool,
                                                                         storage::blob_store& store,
                                                                         const audit_archive_request& req);

} // namespace depot::registry
