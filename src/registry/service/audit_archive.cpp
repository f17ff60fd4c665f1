#include "registry/service/audit_archive.hpp"

#include "common/byte_source.hpp"
#include "common/json.hpp"
#include "registry/repo/audit.hpp"
#include "registry/repo/audit_retention.hpp"
#include "registry/repo/bucket_repository.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/service/object_service.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace depot::registry {
namespace {

/// The installation-wide archive lock ("depotarc"), held with pg_try_advisory_xact_lock.
constexpr std::int64_t archive_lock_key = 0x6465706f74617263;

/// The archive document as the body of a PutObject.
class string_source final : public byte_source
{
public:
    explicit string_source(const std::string& data) : data_(data) {}
    asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override
    {
        const std::size_t n = std::min(buf.size(), data_.size() - offset_);
        std::memcpy(buf.data(), data_.data() + offset_, n);
        offset_ += n;
        co_return n;
    }

private:
    const std::string& data_;
    std::size_t offset_ = 0;
};

/// The rows up to `through_id` (at most `max_rows` of them when not 0) as JSON Lines, in chain order, exactly
/// as list_audit (REST GET /api/v1/audit, `depotctl audit export`) renders them. Sets `first` and `last` to
/// the ids of the first and last row taken.
asio::awaitable<std::string> rows_document(pg::pool& pool, std::int64_t through_id, std::int64_t max_rows,
                                           std::int64_t& first, std::int64_t& last)
{
    audit_query q;
    q.viewer_is_admin = true;
    q.limit = 1000;
    std::string document;
    std::int64_t taken = 0;
    for (;;) {
        auto rows = co_await list_audit(pool, q);
        if (!rows)
            throw std::runtime_error(rows.error().message);
        for (const auto& r : *rows) {
            const auto id = boost::json::parse(r).at("id").to_number<std::int64_t>();
            if (id > through_id || (max_rows > 0 && taken == max_rows))
                co_return document;
            if (!first)
                first = id;
            last = id;
            ++taken;
            document += r;
            document += '\n';
            q.after_id = id;
        }
        if (rows->size() < q.limit)
            co_return document;
    }
}

/// The archive itself, in `lock`'s transaction (which holds the archive lock): COMMITs it when rows left the
/// database; any other way out leaves it open for the caller to end.
asio::awaitable<result<audit_archive_outcome>> archive_under_lock(const audit_context& who, pg::pool& pool,
                                                                  storage::blob_store& store,
                                                                  const audit_archive_request& req,
                                                                  pg::connection& lock)
{
    audit_archive_outcome out;
    // The bucket first: a missing one is reported on every run, also while no row is old enough.
    bucket_repository buckets(pool);
    auto bucket = co_await buckets.get(req.bucket);
    if (!bucket)
        co_return make_error(errc::no_such_bucket, "no bucket " + req.bucket);
    // Only sealed rows can be archived (the anchor is a hash): link what has committed first, which
    // matters when no depotd is sealing (depotctl on its own).
    co_await seal_audit(pool);
    auto through = co_await last_audit_row_before(pool, req.before);
    if (!through)
        co_return std::move(through).error();
    if (!*through)
        co_return out;
    // Only an intact chain is archived: what leaves the database must verify too.
    auto v = co_await verify_audit(pool);
    if (v.bad_row)
        co_return make_error(errc::conflict, "audit log verification FAILED at row " +
                                                 std::to_string(*v.bad_row) + ": " + v.problem +
                                                 "; nothing archived");
    const std::string document =
        co_await rows_document(pool, **through, req.max_rows, out.first_row, out.last_row);
    out.bucket = bucket->name;
    out.key = req.key_prefix + "audit-" + std::to_string(out.first_row) + "-" + std::to_string(out.last_row) +
              ".jsonl";
    object_service objects(pool, store);
    string_source body(document);
    put_object_request put;
    put.target = &*bucket;
    put.key = out.key;
    put.owner_id = bucket->owner_id;
    put.headers.content_type = "application/x-ndjson";
    put.content_length = document.size();
    put.body = &body;
    auto stored = co_await objects.put_object(who, std::move(put));
    if (!stored)
        co_return make_error(stored.error().code, "cannot write s3://" + out.bucket + "/" + out.key + ": " +
                                                      stored.error().message);
    // The rows leave the database only once their copy is stored, and with the row that says where it is.
    out.archived = co_await delete_archived_audit_rows(lock, out.last_row);
    const std::string details =
        "{\"before\":" + audit_quote(req.before) + ",\"first_row\":" + std::to_string(out.first_row) +
        ",\"last_row\":" + std::to_string(out.last_row) + ",\"rows\":" + std::to_string(out.archived) + "}";
    const std::string resource = out.bucket + "/" + out.key;
    co_await append_audit(lock, who, "audit.archive", resource, "", details);
    co_await lock.execute("COMMIT");
    co_return out;
}

} // namespace

asio::awaitable<result<audit_archive_outcome>> archive_audit_rows(const audit_context& who, pg::pool& pool,
                                                                  storage::blob_store& store,
                                                                  const audit_archive_request& req)
{
    // The lock lives in this connection's transaction: released at its COMMIT or ROLLBACK, or when the pool
    // rolls back a connection given back mid-transaction (an exception), or with the session.
    auto lock = co_await pool.acquire();
    co_await lock->execute("BEGIN");
    if (!co_await try_transaction_lock(*lock, archive_lock_key)) {
        co_await lock->execute("ROLLBACK");
        audit_archive_outcome busy;
        busy.busy = true;
        co_return busy;
    }
    auto done = co_await archive_under_lock(who, pool, store, req, *lock);
    // Every way out that did not commit (nothing old enough, a missing bucket, a failed write) ends the
    // transaction here, so the lock is free once this returns. Left to the pool, the rollback ran in the
    // background, and a run right after a failed one could find the lock still held and answer "busy".
    if (lock->in_transaction())
        co_await lock->execute("ROLLBACK");
    co_return done;
}

} // namespace depot::registry
