#pragma once
/// \file
/// The blob collector reclaims blob-store space that no committed metadata can reach:
/// - leftovers of writes that never committed (a crash or kill mid-upload), via the store's
///   `remove_incomplete`;
/// - committed blobs that no `blobs` row names: a write whose blob committed but whose publishing
///   transaction never did (a crash between the two steps), or a removal after the last reference
///   dropped that failed and was only logged.
///
/// Both only touch what is older than a grace age, so a write in flight (its blob committed a moment
/// before its transaction commits) is never collected. A committed piece of a body still arriving (see
/// registry/service/content.hpp) is named by an intent row, and is never collected while the intent is there,
/// whatever its age. Intents whose lease ran out (their depotd crashed, or lost the database for that long)
/// are deleted first, in a transaction of their own: their pieces become ordinary unreferenced blobs, and
/// the publish of their body, which needs every intent, fails instead. Safe with several depotd processes:
/// removing a blob twice answers not_found, which is ignored.

#include "registry/pg/pg.hpp"
#include "storage/blob_store.hpp"

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

struct collection_report
{
    std::size_t incomplete = 0;     ///< leftovers of uncommitted writes removed
    std::size_t lapsed_intents = 0; ///< intents deleted because their lease ran out (none on a dry run)
    std::size_t scanned = 0;        ///< committed blobs listed
    std::size_t orphans = 0;        ///< committed blobs without a `blobs` row removed (or, dry run, found)
    std::uint64_t orphan_bytes = 0;
};

/// One full pass over the store. Throws on database failures; store errors end the pass early (logged),
/// leaving the rest for the next one.
/// `dry_run`: only count the unreferenced committed blobs (counting those of lapsed intents); leftovers of
/// uncommitted writes cannot be enumerated without reclaiming them and are not counted.
asio::awaitable<collection_report> collect_unreachable_blobs(pg::pool& pool, storage::blob_store& store,
                                                             std::chrono::system_clock::time_point older_than,
                                                             bool dry_run = false);

/// What `check_consistency` finds when it cross-checks the registry and the blob store.
struct consistency_report
{
    std::size_t store_blobs = 0;    ///< committed blobs in the store
    std::size_t registry_blobs = 0; ///< rows of `blobs`
    /// Rows whose blob is not in the store: data loss, reported for an operator (never repaired).
    std::vector<std::string> missing;
    /// Committed blobs no row names (store id, size), whatever their age; pieces of bodies in flight (named
    /// by an intent, see content.hpp) are not orphans.
    std::vector<std::pair<std::string, std::uint64_t>> orphans;
    /// Rows whose size differs from the stored blob's.
    std::vector<std::string> size_mismatches;
    /// (row id, recorded refcount, references actually held by object and part segments).
    std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> refcount_mismatches;

    bool clean() const
    {
        return missing.empty() && orphans.empty() && size_mismatches.empty() && refcount_mismatches.empty();
    }
};

/// Cross-checks `blobs` rows against the store (a merge of both id-ordered listings: O(blobs), constant
/// memory per page) and each row's refcount against the segment rows referencing it. Read-only.
asio::awaitable<consistency_report> check_consistency(pg::pool& pool, storage::blob_store& store);

/// Sets every refcount to the number of segment rows referencing the blob, and deletes (then removes
/// from the store) rows left with no reference. Returns the number of rows corrected.
asio::awaitable<std::size_t> repair_refcounts(pg::pool& pool, storage::blob_store& store);

} // namespace depot::registry
