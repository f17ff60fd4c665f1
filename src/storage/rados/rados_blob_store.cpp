/// \file
/// The RADOS blob store.
///
/// Layout. All objects of a store live in one pool and RADOS namespace. Blob `<id>` (32 hex characters)
/// is a head object named `<id>` plus stripe objects `<id>.<i>` (i = 00000000, 00000001, ... in hex), each
/// holding bytes [i * stripe_size, (i + 1) * stripe_size) of the blob. The head has no data, only
/// extended attributes: depot.state ("writing" or "committed") and depot.stripe_size from creation on,
/// and depot.size, depot.stripes and depot.committed_ns once committed. Only a committed head makes a blob
/// visible; ids contain no '.', so a stripe name can never be taken for a head.
///
/// Write protocol.
///  1. The writer makes the head exclusively, in state "writing", before its first stripe is written, so
///     every stripe in RADOS belongs to a findable head. A writer that never filled a stripe has written
///     nothing at all: its commit is one atomic operation that creates the head exclusively with the bytes
///     as the head object's own data, already "committed" with depot.inline = 1 and 0 stripes (a 4 KiB PUT
///     is one RADOS operation instead of three, and a blob of exactly one stripe skips two as well).
///  2. write() fills a stripe buffer; a full stripe is written with one aio write_full, once the store-wide
///     write budget (write_budget.hpp) grants its bytes. At most `window`
///     stripes exist in memory per writer: the one being filled and those in flight. When the window is
///     full, write() waits for the oldest completion.
///  3. commit() writes the last, partial stripe, waits for every stripe write, then flips the head to
///     "committed" and records size, stripe count and time in one atomic RADOS operation guarded by
///     "state is writing". If remove_incomplete() reclaimed the head meanwhile, the guard fails and so does
///     the commit: a reclaimed blob can never become visible with stripes missing.
///  4. abort() waits for the writes in flight, removes the head (guarded by "state is writing"), then the
///     stripes it wrote.
///  A crash at any point leaves a "writing" head and/or stripes without a head, or nothing: never a visible
///  blob.
///
/// Removal, whoever does it (remove, abort, remove_incomplete), takes the head first, atomically guarded
/// by its expected state, then the stripes. The blob disappears in one step and a guard that fails (the
/// blob was committed, or removed, meanwhile) leaves it untouched. A crash or failure after the head went
/// leaves stripes without a head, which are leftovers by definition (a writer's head exists before its
/// first stripe) and which remove_incomplete() reclaims. Removing the stripes first would instead leave a
/// visible blob with holes.
///
/// Reads. open() reads the head (one operation: attributes and mtime) and the reader then reads only the
/// stripes the range covers, and of the first and last only the bytes needed, keeping up to `window`
/// stripe reads in flight or buffered.
///
/// Listing. RADOS lists a namespace in hash order, only synchronously, and with stripes among the heads.
/// list() therefore lists the whole namespace on a private thread, keeps the heads after `after`, sorts
/// them and reads heads in id order until `limit` committed ones are found: O(objects in the namespace)
/// per call. Fine for the garbage collector and fsck it serves; the registry keeps the index users see.
///
/// remove_incomplete(cutoff) lists the namespace the same way. A "writing" head whose mtime and whose
/// stripes' mtimes are all older than the cutoff is removed (guarded, then its stripes). Stripes without a
/// head, all older than the cutoff, are removed once a fresh read confirms the head is still absent.
/// Cost: one listing plus one head read per blob, one blob after the other (stripe stats and removals
/// `window` at a time): a background chore, not something to run per request.
#include "storage/rados/rados_blob_store.hpp"

#include "common/hash.hpp"
#include "storage/offload.hpp"
#include "storage/rados/cluster.hpp"

#include <algorithm>
#include <stdexcept>
#include <system_error>
#include <unordered_map>

namespace depot::storage {
namespace {

using namespace rados_detail;

/// Objects of one blob seen in a listing.
struct listed_blob
{
    bool head = false;
    std::vector<std::uint64_t> stripes;
};

class rados_blob_store final : public blob_store
{
public:
    explicit rados_blob_store(rados_options options) : c_(std::make_shared<cluster>(std::move(options))) {}

    asio::awaitable<result<std::unique_ptr<blob_writer>>> create(write_options options) override
    {
        // The writer makes the head (exclusively) when it first needs it; a 128-bit random id never
        // collides in practice, and the exclusive create makes sure.
        co_return make_writer(c_, make_random_blob_id(), c_->options.stripe_size, options.size_hint);
    }

    asio::awaitable<result<std::unique_ptr<blob_reader>>> open(const blob_id& id, std::uint64_t offset,
                                                               std::uint64_t length) override
    {
        // The head and, should the blob be inline, its bytes: one operation.
        ceph::bufferlist data;
        auto head = co_await committed_head(id, offset, std::min(length, c_->options.stripe_size), data);
        if (!head)
            co_return std::move(head).error();
        if (offset > head->size)
            co_return make_error(errc::invalid_range, "offset is beyond the end of blob " + id);
        auto end = offset + std::min(length, head->size - offset);
        if (head->inline_data && data.length() == end - offset)
            co_return make_reader(c_, id, *head, offset, end, std::move(data));
        co_return make_reader(c_, id, *head, offset, end);
    }

    asio::awaitable<result<blob_info>> stat(const blob_id& id) override
    {
        auto head = co_await committed_head(id);
        if (!head)
            co_return std::move(head).error();
        co_return blob_info{.size = head->size, .modified = head->committed_at};
    }

    asio::awaitable<result<void>> remove(const blob_id& id) override
    {
        auto head = co_await committed_head(id);
        if (!head)
            co_return std::move(head).error();
        int r = co_await remove_head_if(*c_, id, state_committed);
        if (r == -ENOENT || r == -ECANCELED)
            co_return not_found(id); // removed (or replaced) by someone else meanwhile
        if (r < 0)
            co_return rados_error(r, "removing the head of blob " + id);
        // The blob is gone; stripes that could not be removed now are leftovers for remove_incomplete.
        co_await remove_stripes(*c_, id, head->stripes);
        co_return ok();
    }

    asio::awaitable<result<std::vector<blob_listing_entry>>> list(const blob_id& after,
                                                                  std::size_t limit) override
    {
        std::vector<blob_listing_entry> out;
        if (limit == 0)
            co_return out;
        auto listed = co_await list_namespace();
        if (!listed)
            co_return std::move(listed).error();
        std::vector<blob_id> heads;
        for (auto& [id, objects] : *listed)
            if (objects.head && id > after)
                heads.push_back(id);
        std::sort(heads.begin(), heads.end());

        // Heads are read `window` at a time, in id order; "writing" and vanished heads are skipped.
        std::size_t next = 0;
        while (out.size() < limit && next < heads.size()) {
            auto batch =
                std::min<std::size_t>({heads.size() - next, limit - out.size() + 1, c_->options.window});
            std::vector<head_read> reads(batch);
            co_await read_heads(std::span(heads).subspan(next, batch), reads);
            for (std::size_t i = 0; i < batch && out.size() < limit; ++i) {
                const auto& read = reads[i];
                if (read.r == -ENOENT || (read.r == 0 && (!read.head || !read.head->committed)))
                    continue;
                if (read.r < 0)
                    co_return rados_error(read.r, "reading the head of blob " + heads[next + i]);
                out.push_back(
                    {heads[next + i], {.size = read.head->size, .modified = read.head->committed_at}});
            }
            next += batch;
        }
        co_return out;
    }

    asio::awaitable<result<std::size_t>> remove_incomplete(clock::time_point older_than) override
    {
        auto listed = co_await list_namespace();
        if (!listed)
            co_return std::move(listed).error();
        std::size_t removed = 0;
        for (auto& [id, objects] : *listed) {
            auto r = co_await reclaim_if_incomplete(id, objects, older_than);
            if (!r)
                co_return std::move(r).error();
            removed += *r ? 1 : 0;
        }
        co_return removed;
    }

    std::string_view kind() const noexcept override { return "rados"; }

    rados_store_stats stats() const noexcept
    {
        return {.stripe_writes = c_->stripe_writes.load(),
                .inline_writes = c_->inline_writes.load(),
                .stripe_reads = c_->stripe_reads.load(),
                .head_reads = c_->head_reads.load(),
                .peak_writes_in_flight = c_->peak_writes_in_flight.load(),
                .peak_reads_in_flight = c_->peak_reads_in_flight.load(),
                .peak_write_bytes = c_->write_bytes ? c_->write_bytes->peak() : 0,
                .write_budget_waits = c_->write_bytes ? c_->write_bytes->waits() : 0};
    }

private:
    static error not_found(const blob_id& id) { return make_error(errc::not_found, "no blob " + id); }

    /// The head of a committed blob; not_found for malformed ids (without asking RADOS), missing blobs and
    /// blobs still being written.
    asio::awaitable<result<head_info>> committed_head(const blob_id& id)
    {
        ceph::bufferlist none;
        co_return co_await committed_head(id, 0, 0, none);
    }

    /// The same, also reading up to `length` bytes at `offset` of the head object's data into `data`.
    asio::awaitable<result<head_info>> committed_head(const blob_id& id, std::uint64_t offset,
                                                      std::uint64_t length, ceph::bufferlist& data)
    {
        if (!is_valid_blob_id(id))
            co_return not_found(id);
        auto read = co_await read_head(*c_, id, offset, length, data);
        if (read.r == -ENOENT)
            co_return not_found(id);
        if (read.r < 0)
            co_return rados_error(read.r, "reading the head of blob " + id);
        if (!read.head || !read.head->committed)
            co_return not_found(id);
        co_return *read.head;
    }

    /// Reads the heads of `ids` concurrently into `out` (same order).
    asio::awaitable<void> read_heads(std::span<const blob_id> ids, std::vector<head_read>& out)
    {
        // One coroutine per head would need a spawn; instead start the compound reads on one queue and keep
        // their out-parameters in per-head slots that live until every read is back.
        struct slot
        {
            std::map<std::string, ceph::bufferlist> attrs;
            int attrs_r = 0;
            int stat_r = 0;
            std::uint64_t size = 0;
            timespec mtime{};
            librados::ObjectReadOperation op;
        };
        std::vector<slot> slots(ids.size());
        auto queue = aio_queue::make();
        for (std::size_t i = 0; i < ids.size(); ++i) {
            auto& s = slots[i];
            s.op.getxattrs(&s.attrs, &s.attrs_r);
            s.op.stat2(&s.size, &s.mtime, &s.stat_r);
            c_->head_reads.fetch_add(1, std::memory_order_relaxed);
            queue->start(i, [&](librados::AioCompletion* completion, ceph::bufferlist& bl) {
                return c_->io.aio_operate(ids[i], completion, &s.op, &bl);
            });
        }
        while (queue->pending() > 0) {
            auto done = co_await queue->next();
            auto& s = slots[done.tag];
            auto& read = out[done.tag];
            read.r = done.r < 0 ? done.r : s.attrs_r < 0 ? s.attrs_r : s.stat_r;
            if (read.r == 0) {
                read.head = decode_head(s.attrs);
                read.mtime = clock::time_point(std::chrono::duration_cast<clock::duration>(
                    std::chrono::seconds(s.mtime.tv_sec) + std::chrono::nanoseconds(s.mtime.tv_nsec)));
            }
        }
    }

    /// Every head and stripe in the namespace, grouped by blob id. Runs the synchronous librados listing
    /// on the store's listing thread.
    asio::awaitable<result<std::unordered_map<blob_id, listed_blob>>> list_namespace()
    {
        // Named, not a temporary: GCC 12 destroys a temporary passed to a coroutine inside co_await twice.
        auto list_all = [c = c_.get()]() -> std::pair<int, std::vector<std::string>> {
            std::vector<std::string> names;
            try {
                for (auto it = c->io.nobjects_begin(); it != c->io.nobjects_end(); ++it)
                    names.push_back(it->get_oid());
            } catch (const std::system_error& e) {
                return {-e.code().value(), {}};
            }
            return {0, std::move(names)};
        };
        auto listing = co_await run_blocking(c_->listing_pool, std::move(list_all));
        if (listing.first < 0)
            co_return rados_error(listing.first, "listing the namespace");
        std::unordered_map<blob_id, listed_blob> blobs;
        for (const auto& name : listing.second) {
            auto parsed = parse_object_name(name);
            if (!parsed)
                continue; // not ours
            auto& b = blobs[parsed->id];
            if (parsed->stripe)
                b.stripes.push_back(*parsed->stripe);
            else
                b.head = true;
        }
        co_return blobs;
    }

    /// Removes the blob `id` if it is an old enough leftover; true if it did.
    asio::awaitable<result<bool>> reclaim_if_incomplete(const blob_id& id, const listed_blob& objects,
                                                        clock::time_point older_than)
    {
        auto read = co_await read_head(*c_, id);
        if (read.r < 0 && read.r != -ENOENT)
            co_return rados_error(read.r, "reading the head of blob " + id);
        const bool has_head = read.r == 0;
        if (has_head && (!read.head || read.head->committed || read.mtime >= older_than))
            co_return false; // committed (or not ours), or touched recently
        if (!has_head && objects.stripes.empty())
            co_return false; // gone meanwhile

        // Stripes count as activity too: a long upload keeps writing them long after its head was made.
        auto young = co_await any_stripe_younger(id, objects.stripes, older_than);
        if (!young)
            co_return std::move(young).error();
        if (*young)
            co_return false;

        if (has_head) {
            int r = co_await remove_head_if(*c_, id, state_writing);
            if (r == -ECANCELED)
                co_return false; // committed meanwhile
            if (r < 0 && r != -ENOENT)
                co_return rados_error(r, "removing the head of unfinished blob " + id);
        }
        std::uint64_t count = 0;
        if (!objects.stripes.empty())
            count = *std::max_element(objects.stripes.begin(), objects.stripes.end()) + 1;
        if (int r = co_await remove_stripes(*c_, id, count); r < 0)
            co_return rados_error(r, "removing the stripes of unfinished blob " + id);
        co_return true;
    }

    /// Whether any of the listed stripes was modified at or after `older_than` (missing ones are not).
    asio::awaitable<result<bool>> any_stripe_younger(const blob_id& id,
                                                     const std::vector<std::uint64_t>& stripes,
                                                     clock::time_point older_than)
    {
        // A compound read with stat2: librados declares IoCtx::aio_stat2 but does not export it.
        struct stat_slot
        {
            std::uint64_t size = 0;
            timespec mtime{};
            int r = 0;
            librados::ObjectReadOperation op;
        };
        std::vector<stat_slot> slots(stripes.size());
        auto queue = aio_queue::make();
        bool young = false;
        int failure = 0;
        auto collect = [&](const aio_result& done) {
            if (done.r < 0) {
                if (done.r != -ENOENT && failure == 0)
                    failure = done.r;
                return;
            }
            const auto& s = slots[done.tag];
            if (s.r < 0) {
                if (s.r != -ENOENT && failure == 0)
                    failure = s.r;
                return;
            }
            auto mtime = clock::time_point(std::chrono::duration_cast<clock::duration>(
                std::chrono::seconds(s.mtime.tv_sec) + std::chrono::nanoseconds(s.mtime.tv_nsec)));
            young = young || mtime >= older_than;
        };
        for (std::size_t i = 0; i < stripes.size(); ++i) {
            if (queue->pending() >= c_->options.window)
                collect(co_await queue->next());
            auto& s = slots[i];
            s.op.stat2(&s.size, &s.mtime, &s.r);
            queue->start(i, [&, name = stripe_name(id, stripes[i])](librados::AioCompletion* completion,
                                                                    ceph::bufferlist& bl) {
                return c_->io.aio_operate(name, completion, &s.op, &bl);
            });
        }
        while (queue->pending() > 0)
            collect(co_await queue->next());
        if (failure < 0)
            co_return rados_error(failure, "reading the stripes of unfinished blob " + id);
        co_return young;
    }

    std::shared_ptr<cluster> c_;
};

} // namespace

std::unique_ptr<blob_store> make_rados_blob_store(rados_options options)
{
    if (options.stripe_size < 4096 || options.stripe_size > (128u << 20))
        throw std::invalid_argument("rados: stripe_size must be between 4 KiB and 128 MiB (the OSDs' default "
                                    "maximum object size)");
    if (options.window < 1 || options.window > 1024)
        throw std::invalid_argument("rados: window must be between 1 and 1024");
    if (options.pool.empty())
        throw std::invalid_argument("rados: no pool given");
    if (options.user.find('.') == std::string::npos)
        throw std::invalid_argument("rados: user must be a full entity name such as client.admin");
    return std::make_unique<rados_blob_store>(std::move(options));
}

std::optional<rados_store_stats> rados_stats(const blob_store& store)
{
    if (const auto* rados = dynamic_cast<const rados_blob_store*>(&store))
        return rados->stats();
    return std::nullopt;
}

} // namespace depot::storage
