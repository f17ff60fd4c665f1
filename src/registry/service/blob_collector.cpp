#include "registry/service/blob_collector.hpp"

#include "common/log.hpp"
#include "registry/repo/blob_collector.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/service/content.hpp"
#include "storage/sealed/sealed_format.hpp"

#include <stdexcept>
#include <unordered_set>

namespace depot::registry {

namespace {

constexpr std::size_t page_size = 1000;

/// A PostgreSQL text[] literal of store ids. Store ids are [0-9a-z] only (the blob-store contract), so no
/// element needs quoting; anything else is skipped rather than trusted.
std::string id_array(const std::vector<storage::blob_listing_entry>& page)
{
    std::string out = "{";
    bool first = true;
    for (const auto& e : page) {
        if (!storage::is_valid_blob_id(e.id))
            continue;
        if (!first)
            out += ',';
        first = false;
        out += e.id;
    }
    return out + "}";
}

} // namespace

asio::awaitable<collection_report> collect_unreachable_blobs(pg::pool& pool, storage::blob_store& store,
                                                             std::chrono::system_clock::time_point older_than,
                                                             bool dry_run)
{
    collection_report report;
    if (!dry_run) {
        // Committed on its own before the scan: a publish that comes later finds its intents gone and fails,
        // and one that deleted them first has committed its `blobs` rows, which the scan then sees.
        auto conn = co_await pool.acquire();
        const std::size_t lapsed = co_await delete_lapsed_intents(*conn);
        report.lapsed_intents = lapsed;
        if (lapsed != 0)
            log::warn("collector: intents whose lease ran out were deleted; their pieces are reclaimed",
                      {{"intents", lapsed}});
    }
    if (!dry_run) {
        auto incomplete = co_await store.remove_incomplete(older_than);
        if (incomplete)
            report.incomplete = *incomplete;
        else
            log::warn("collector: removing incomplete writes failed",
                      {{"error", incomplete.error().message}});
    }

    storage::blob_id after;
    for (;;) {
        auto page = co_await store.list(after, page_size);
        if (!page) {
            log::warn("collector: listing blobs failed", {{"error", page.error().message}});
            break;
        }
        if (page->empty())
            break;
        after = page->back().id;
        report.scanned += page->size();

        std::unordered_set<std::string> known;
        {
            auto conn = co_await pool.acquire();
            const auto ids = id_array(*page);
            // One statement, one snapshot: a publish moves a piece from its intent to its `blobs` row in one
            // transaction, so the piece is seen under one or the other.
            auto rs = co_await known_store_ids(*conn, ids, dry_run);
            for (auto& id : rs)
                known.emplace(std::move(id));
        }
        for (const auto& e : *page) {
            if (known.contains(e.id) || e.info.modified >= older_than)
                continue;
            if (dry_run) {
                ++report.orphans;
                report.orphan_bytes += e.info.size;
                continue;
            }
            auto removed = co_await store.remove(e.id);
            if (removed) {
                ++report.orphans;
                report.orphan_bytes += e.info.size;
                log::info("collector: removed an unreferenced blob", {{"blob", e.id}, {"size", e.info.size}});
            } else if (removed.error().code != errc::not_found) {
                log::warn("collector: removing an unreferenced blob failed",
                          {{"blob", e.id}, {"error", removed.error().message}});
            }
        }
        if (page->size() < page_size)
            break;
    }
    co_return report;
}

asio::awaitable<consistency_report> check_consistency(pg::pool& pool, storage::blob_store& store)
{
    consistency_report report;
    // Merge the store's listing (ascending id) with the rows (ascending store_id, byte order).
    storage::blob_id store_after;
    std::string row_after;
    std::vector<storage::blob_listing_entry> stored;
    std::size_t si = 0;
    bool store_done = false;
    std::vector<std::pair<std::string, std::int64_t>> rows;
    std::size_t ri = 0;
    bool rows_done = false;
    for (;;) {
        if (si == stored.size() && !store_done) {
            auto page = co_await store.list(store_after, page_size);
            if (!page)
                throw std::runtime_error("listing the blob store failed: " + page.error().message);
            stored = std::move(*page);
            si = 0;
            store_done = stored.size() < page_size;
            if (!stored.empty())
                store_after = stored.back().id;
            report.store_blobs += stored.size();
        }
        if (ri == rows.size() && !rows_done) {
            auto conn = co_await pool.acquire();
            auto rs = co_await blob_rows_after(*conn, row_after);
            rows.clear();
            // The store holds an encrypted blob sealed: its plaintext size (the row's) plus the format's.
            for (auto& r : rs)
                rows.emplace_back(std::move(r.store_id),
                                  r.sealed ? static_cast<std::int64_t>(storage::sealed::sealed_size(
                                                 static_cast<std::uint64_t>(r.size)))
                                           : r.size);
            ri = 0;
            rows_done = rows.size() < 1000;
            if (!rows.empty())
                row_after = rows.back().first;
            report.registry_blobs += rows.size();
        }
        const bool have_store = si < stored.size(), have_row = ri < rows.size();
        if (!have_store && !have_row)
            break;
        if (have_store && (!have_row || stored[si].id < rows[ri].first)) {
            report.orphans.emplace_back(stored[si].id, stored[si].info.size);
            ++si;
        } else if (have_row && (!have_store || rows[ri].first < stored[si].id)) {
            report.missing.push_back(rows[ri].first);
            ++ri;
        } else {
            if (static_cast<std::int64_t>(stored[si].info.size) != rows[ri].second)
                report.size_mismatches.push_back(rows[ri].first);
            ++si;
            ++ri;
        }
    }

    auto conn = co_await pool.acquire();
    if (!report.orphans.empty()) {
        // Read after the listing: a piece whose intent was written before the piece was listed is seen.
        std::vector<storage::blob_listing_entry> listed;
        for (const auto& [id, size] : report.orphans)
            listed.push_back({.id = id, .info = {}});
        const std::string ids = id_array(listed);
        auto held = co_await intent_store_ids(*conn, ids);
        std::unordered_set<std::string> in_flight;
        for (auto& id : held)
            in_flight.emplace(std::move(id));
        std::erase_if(report.orphans, [&](const auto& orphan) { return in_flight.contains(orphan.first); });
    }
    report.refcount_mismatches = co_await refcount_mismatches(*conn);
    co_return report;
}

asio::awaitable<std::size_t> repair_refcounts(pg::pool& pool, storage::blob_store& store)
{
    std::vector<std::string> unreferenced;
    std::size_t corrected = 0;
    {
        // SERIALIZABLE: counting segment rows and rewriting refcounts must see one consistent state even with
        // writers running; a conflict aborts the repair (pg::error 40001) and the operator runs it again. On
        // any exception the pool rolls the abandoned transaction back.
        auto conn = co_await pool.acquire();
        co_await sql(*conn, "BEGIN ISOLATION LEVEL SERIALIZABLE");
        corrected = co_await correct_refcounts(*conn);
        unreferenced = co_await delete_zero_refcount_blobs(*conn);
        co_await sql(*conn, "COMMIT");
    }
    co_await remove_blobs(store, std::move(unreferenced));
    co_return corrected;
}

} // namespace depot::registry
