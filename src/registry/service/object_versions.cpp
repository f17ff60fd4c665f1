// S3 versioning on objects: deleting (delete markers, permanent deletion of a version), the bucket's
// versioning state, and ListObjectVersions. Writes go through the same steps as PutObject (lock the bucket
// and the key's current row, retire_current, insert_version), so exactly one version of a key is current at
// any time and a version that is not current keeps its blob references until it is deleted permanently.
#include "registry/repo/object_versions.hpp"

#include "registry/repo/audit.hpp"
#include "registry/repo/events.hpp"
#include "registry/repo/object_lock.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/repo/versions.hpp"
#include "registry/service/conditional_delete.hpp"
#include "registry/service/content.hpp"
#include "registry/service/lookup_cache.hpp"
#include "registry/service/object_service.hpp"
#include "registry/transaction.hpp"
#include "s3/conditions.hpp"
#include "s3/listing.hpp"
#include "s3/names.hpp"

namespace depot::registry {
namespace {

/// Checks the conditions of a conditional delete against the version row `row` (0: none), locked by the
/// caller.
asio::awaitable<result<void>> check_delete_conditions(pg::connection& c, const delete_conditions& req,
                                                      std::int64_t row)
{
    if (req.empty())
        co_return ok();
    if (row == 0)
        co_return make_error(errc::no_such_key);
    auto facts = co_await version_condition_facts(c, row);
    if (!facts || facts->is_delete_marker)
        co_return make_error(errc::no_such_key);
    if (req.if_match && !s3::etag_list_matches(*req.if_match, facts->etag, false))
        co_return make_error(errc::precondition_failed);
    if (req.if_match_size && static_cast<std::uint64_t>(facts->size) != *req.if_match_size)
        co_return make_error(errc::precondition_failed);
    if (req.if_match_last_modified) {
        using std::chrono::floor;
        using std::chrono::seconds;
        if (floor<seconds>(from_millis(facts->last_modified_ms)) !=
            floor<seconds>(*req.if_match_last_modified))
            co_return make_error(errc::precondition_failed);
    }
    co_return ok();
}

/// Records a delete (also one that found nothing: S3 reports it as done) and returns its outcome.
asio::awaitable<result<delete_outcome>> audited_delete(pg::connection& c, const audit_context& who,
                                                       const delete_request& req, delete_outcome out,
                                                       bool bypassed_governance = false)
{
    std::string details = "{\"version_id\":" + audit_quote(out.version_id) +
                          ",\"delete_marker\":" + (out.delete_marker ? "true" : "false") +
                          (bypassed_governance ? ",\"bypass_governance\":true}" : "}");
    co_await append_object_audit(c, who, "object.delete", req.bucket_id, req.key, std::move(details));
    co_return out;
}

} // namespace

asio::awaitable<result<delete_outcome>> object_service::remove(const audit_context& who, delete_request req)
{
    co_return co_await remove_object(who, pool_, store_, std::move(req), {});
}

asio::awaitable<result<delete_outcome>> remove_object(const audit_context& who, pg::pool& pool,
                                                      storage::blob_store& store, delete_request req,
                                                      delete_conditions conditions)
{
    std::vector<std::string> unreferenced;
    auto removed = co_await transact(pool, [&](pg::connection& c) -> asio::awaitable<result<delete_outcome>> {
        unreferenced.clear();
        auto mode = co_await lock_bucket_versioning(c, req.bucket_id);
        if (!mode)
            co_return make_error(errc::no_such_bucket, "The specified bucket does not exist");
        // Every change to a key's versions takes the current row's lock first: writers of the key
        // serialize.
        auto current = co_await lock_current(c, req.bucket_id, req.key);
        delete_outcome out;
        if (!req.version_id) {
            if (auto met = co_await check_delete_conditions(c, conditions, current ? current->row : 0); !met)
                co_return std::move(met).error();
            if (*mode == versioning_mode::unversioned) {
                if (current) {
                    co_await release_version(c, current->row, unreferenced);
                    co_await events::emit_object_event(c, "object.deleted", req.bucket_id, req.key, "null", 0,
                                                       "", req.owner_id);
                }
                co_return co_await audited_delete(c, who, req, out);
            }
            // A delete marker becomes the current version, even when the key has no version at all.
            auto slot = co_await retire_current(c, *mode, req.bucket_id, req.key, current, unreferenced);
            object_version marker;
            marker.bucket_id = req.bucket_id;
            marker.key = req.key;
            marker.version_id = slot.version_id;
            marker.is_delete_marker = true;
            marker.owner_id = req.owner_id;
            if (marker.owner_id.empty())
                marker.owner_id = co_await bucket_owner_of(c, req.bucket_id);
            co_await insert_version(c, marker, slot.seq);
            out.version_id = slot.version_id;
            out.delete_marker = true;
            co_return co_await audited_delete(c, who, req, out);
        }
        out.version_id = *req.version_id;
        auto found = co_await lock_version_row(c, req.bucket_id, req.key, *req.version_id);
        if (auto met = co_await check_delete_conditions(c, conditions, found ? found->row : 0); !met)
            co_return std::move(met).error();
        if (!found)
            co_return co_await audited_delete(c, who, req, out);
        out.delete_marker = found->is_delete_marker;
        // Object Lock: a retained or held version stays (checked under the row lock lock_version_row took).
        auto removable = co_await check_removable(c, found->row, req.bypass_governance);
        if (!removable)
            co_return std::move(removable).error();
        co_await release_version(c, found->row, unreferenced);
        co_await events::emit_object_event(c, "object.deleted", req.bucket_id, req.key, *req.version_id, 0,
                                           "", req.owner_id);
        if (found->is_current) {
            auto newest = co_await newest_version_row(c, req.bucket_id, req.key);
            if (newest)
                co_await reinstate_version(c, *newest);
        }
        co_return co_await audited_delete(c, who, req, out, *removable);
    });
    co_await remove_blobs(store, std::move(unreferenced));
    co_return removed;
}

asio::awaitable<result<void>> object_service::set_versioning(const audit_context& who, std::int64_t bucket_id,
                                                             versioning_mode mode)
{
    if (mode == versioning_mode::unversioned)
        co_return make_error(errc::invalid_argument, "A bucket cannot return to the unversioned state");
    auto changed = co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
        const std::string_view stored = to_string(mode);
        auto rs = co_await update_bucket_versioning(c, bucket_id, stored);
        if (!rs)
            co_return make_error(errc::no_such_bucket, "The specified bucket does not exist");
        if (rs->refused_by_object_lock) // Object Lock keeps versioning Enabled
            co_return make_error(errc::invalid_bucket_state,
                                 "An Object Lock configuration is present on this "
                                 "bucket, so the versioning state cannot be changed.");
        co_await append_audit(c, who, "bucket.versioning", rs->bucket_name, "",
                              "{\"versioning\":" + audit_quote(to_string(mode)) + "}");
        co_return ok();
    });
    if (changed && cache_)
        cache_->forget_bucket_id(bucket_id);
    co_return changed;
}

asio::awaitable<result<versions_page>> object_service::list_versions(list_versions_request req)
{
    versions_page page;
    auto start = s3::listing_start(req.prefix, req.delimiter, req.key_marker);
    if (req.max_keys == 0 || start.exhausted)
        co_return page;
    const std::string upper = req.prefix.empty() ? std::string() : s3::prefix_successor(req.prefix);
    s3::listing_page fold(req.prefix, req.delimiter, req.max_keys);

    // The scan position: keys after (or from) `bound`; while `within` is set, first the versions of key
    // `bound` older than created_seq `within`.
    std::string bound = std::move(start.key);
    bool inclusive = start.inclusive;
    std::int64_t within = 0;

    auto conn = co_await pool_.acquire();
    // A version-id-marker continues inside its key, unless that key rolled up into a common prefix (then the
    // whole prefix was listed already and listing_start skips it).
    if (!req.version_id_marker.empty() && !inclusive && bound == req.key_marker) {
        // A version id names its created_seq unless the version was reinstated (reinstate_version).
        auto seq = co_await version_created_seq(*conn, req.bucket_id, req.key_marker, req.version_id_marker);
        if (seq)
            within = *seq;
        else if (req.version_id_marker != "null")
            within = seq_of_version_id(req.version_id_marker);
    }

    std::string last_version;
    bool done = false;
    while (!done) {
        const auto batch =
            static_cast<std::int64_t>(std::min<std::size_t>(req.max_keys - fold.count() + 1, 1000));
        std::vector<version_row> rs;
        const bool in_key = within != 0;
        if (in_key)
            rs = co_await key_versions_before(*conn, req.bucket_id, bound, within, batch);
        else
            rs = co_await versions_from(*conn, req.bucket_id, bound, inclusive, upper, batch);
        const bool full = static_cast<std::int64_t>(rs.size()) == batch;
        bool reseek = false;
        for (auto& r : rs) {
            auto step = fold.offer(r.entry.key);
            if (step.what == s3::listing_page::action::stop) {
                done = true;
                break;
            }
            if (step.what == s3::listing_page::action::common_prefix) {
                last_version.clear();
                if (step.seek.empty()) {
                    done = true;
                } else {
                    bound = std::move(step.seek);
                    inclusive = true;
                    within = 0;
                    reseek = true;
                }
                break;
            }
            // Resume after this row: the key's older versions, then the following keys.
            bound = r.entry.key;
            inclusive = false;
            within = r.created_seq;
            if (step.what == s3::listing_page::action::content) {
                last_version = r.entry.version_id;
                page.entries.push_back(std::move(r.entry));
            }
        }
        if (done || reseek)
            continue;
        if (!full) {
            if (!in_key)
                break;
            // The key's versions are exhausted: continue with the keys after it.
            within = 0;
            inclusive = false;
        }
    }
    page.common_prefixes = fold.common_prefixes();
    page.truncated = fold.truncated();
    if (page.truncated) {
        page.next_key_marker = fold.last();
        page.next_version_id_marker = last_version;
    }
    co_return page;
}

} // namespace depot::registry
