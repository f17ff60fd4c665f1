/// \file
/// The RADOS blob writer: fills stripe buffers, keeps up to `window` of them in flight as aio writes and
/// commits by flipping the head's state (see rados_blob_store.cpp for the protocol).
#include "common/log.hpp"
#include "storage/rados/cluster.hpp"

#include <algorithm>
#include <stdexcept>

namespace depot::storage::rados_detail {
namespace {

class rados_writer final : public blob_writer
{
public:
    rados_writer(std::shared_ptr<cluster> c, blob_id id, std::uint64_t stripe_size, std::uint64_t size_hint)
        : c_(std::move(c)), id_(std::move(id)), stripe_size_(stripe_size), size_hint_(size_hint)
    {}

    const blob_id& id() const noexcept override { return id_; }
    std::uint64_t size() const noexcept override { return size_; }

    asio::awaitable<result<void>> write(std::span<const std::byte> data) override
    {
        require_open("write");
        if (failed_)
            co_return *failed_;
        const auto* p = reinterpret_cast<const char*>(data.data());
        std::size_t left = data.size();
        while (left > 0) {
            // A full stripe goes out only once more bytes follow: a blob of exactly one stripe then still
            // commits inline, in one operation.
            if (filling_ && filled_ == stripe_size_) {
                co_await flush();
                if (failed_)
                    co_return *failed_;
            }
            if (!filling_) {
                const bool started = co_await start_stripe();
                if (!started)
                    co_return *failed_;
            }
            auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, stripe_size_ - filled_));
            make_room(filled_ + n);
            // copy_in, not memcpy: it also drops the crc32c values librados cached in a reused buffer
            // (the messenger would send the old bytes' crc, and the OSD drop the message as corrupt).
            stripe_.copy_in(static_cast<unsigned>(filled_), static_cast<unsigned>(n), p);
            filled_ += n;
            p += n;
            left -= n;
            size_ += n;
        }
        co_return ok();
    }

    asio::awaitable<result<void>> commit() override
    {
        require_open("commit");
        if (failed_)
            co_return *failed_;
        if (!head_created_) {
            // Every byte is still here (at most one stripe): head, bytes and commit in one operation.
            co_return co_await commit_inline();
        }
        if (filling_)
            co_await flush();
        co_await drain();
        if (failed_)
            co_return *failed_;

        librados::ObjectWriteOperation op;
        op.cmpxattr(attr_state, LIBRADOS_CMPXATTR_OP_EQ, to_bufferlist(state_writing));
        set_committed(op, stripes_started_);
        auto done = co_await run_aio([&](librados::AioCompletion* completion, ceph::bufferlist&) {
            return c_->io.aio_operate(id_, completion, &op);
        });
        if (done.r == -ECANCELED || done.r == -ENOENT)
            failed_ =
                make_error(errc::io_error,
                           "rados: blob " + id_ + " was reclaimed by remove_incomplete before it committed");
        else if (done.r < 0)
            failed_ = rados_error(done.r, "committing blob " + id_);
        if (failed_)
            co_return *failed_;
        committed_ = true;
        co_return ok();
    }

    asio::awaitable<void> abort() override
    {
        if (committed_ || aborted_)
            co_return;
        aborted_ = true;
        release_stripe();
        filling_ = false;
        if (!head_created_)
            co_return; // nothing reached RADOS
        // A stripe removed before its write lands would come back; wait for the writes first.
        co_await drain();
        // The head goes first, guarded by its state, like every removal: were it committed after all (a
        // commit whose reply was lost), the blob stays whole and the registry's collector deals with it.
        int r = co_await remove_head_if(*c_, id_, state_writing);
        if (r == 0 || r == -ENOENT) {
            co_await remove_stripes(*c_, id_, stripes_started_);
        } else if (r == -ECANCELED) {
            log::warn("rados: aborted blob turned out committed; leaving it whole", {{"blob", id_}});
        } else {
            log::warn("rados: could not remove an aborted blob's head; remove_incomplete will reclaim it",
                      {{"blob", id_}, {"error", rados_error(r, "").message}});
        }
    }

private:
    void require_open(const char* op) const
    {
        if (committed_ || aborted_)
            throw std::logic_error(std::string("blob_writer::") + op + " after commit or abort");
    }

    /// Makes room for one more stripe buffer: the one being filled plus those in flight never exceed
    /// `window`. False when a stripe write failed.
    asio::awaitable<bool> start_stripe()
    {
        if (stripes_started_ >= max_stripes) {
            failed_ = make_error(errc::too_large,
                                 "rados: blob " + id_ + " has more stripes than a name can number");
            co_return false;
        }
        while (!failed_ && queue_->pending() >= c_->options.window)
            collect(co_await queue_->next());
        if (failed_)
            co_return false;
        filling_ = true;
        // With a size hint below a stripe, a buffer of just that (a small object's bytes); otherwise a whole
        // stripe's, reused from the pool.
        if (size_hint_ > size_ && size_hint_ - size_ < stripe_size_)
            stripe_ = ceph::bufferptr(static_cast<unsigned>(size_hint_ - size_));
        else
            stripe_ = whole_stripe();
        filled_ = 0;
        co_return true;
    }

    /// A buffer of stripe_size_ bytes: from the store's pool when its size is the pool's.
    ceph::bufferptr whole_stripe()
    {
        if (c_->stripe_pool && c_->stripe_pool->size() == stripe_size_)
            return c_->stripe_pool->take();
        return ceph::bufferptr(ceph::buffer::create_page_aligned(static_cast<unsigned>(stripe_size_)));
    }

    /// Grows the stripe buffer to hold `needed` bytes (more arrived than the size hint said): a whole
    /// stripe's buffer, with what was filled so far.
    void make_room(std::size_t needed)
    {
        if (stripe_.length() >= needed)
            return;
        ceph::bufferptr bigger = whole_stripe();
        bigger.copy_in(0, static_cast<unsigned>(filled_), stripe_.c_str());
        release_stripe();
        stripe_ = std::move(bigger);
    }

    /// Done with the stripe buffer (a write in flight may still share it): back to the pool.
    void release_stripe()
    {
        if (stripe_.have_raw() && c_->stripe_pool)
            c_->stripe_pool->give(std::move(stripe_));
        stripe_ = ceph::bufferptr();
        filled_ = 0;
    }

    /// The filled bytes of the stripe buffer, shared (not copied) by the returned list.
    ceph::bufferlist filled_bytes() const
    {
        ceph::bufferlist bl;
        if (filled_ > 0)
            bl.append(stripe_, 0, static_cast<unsigned>(filled_));
        return bl;
    }

    /// Adds what a committed head records, the same for a striped and an inline blob: size, stripe count,
    /// commit time and the state.
    void set_committed(librados::ObjectWriteOperation& op, std::uint64_t stripes) const
    {
        op.setxattr(attr_size, to_bufferlist(std::to_string(size_)));
        op.setxattr(attr_stripes, to_bufferlist(std::to_string(stripes)));
        auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now().time_since_epoch());
        op.setxattr(attr_committed, to_bufferlist(std::to_string(now.count())));
        op.setxattr(attr_state, to_bufferlist(state_committed));
    }

    /// The failure of an operation that creates the head exclusively (`what` + the id failed).
    error create_failure(int r, std::string_view what) const
    {
        if (r == -EEXIST)
            return make_error(errc::io_error, "rados: a blob named " + id_ + " exists already");
        return rados_error(r, std::string(what) + id_);
    }

    /// Creates the head, in state "writing", exclusively. False (and failed_ set) when that fails.
    asio::awaitable<bool> create_head()
    {
        librados::ObjectWriteOperation op;
        op.create(true);
        op.setxattr(attr_state, to_bufferlist(state_writing));
        op.setxattr(attr_stripe_size, to_bufferlist(std::to_string(stripe_size_)));
        auto done = co_await run_aio([&](librados::AioCompletion* completion, ceph::bufferlist&) {
            return c_->io.aio_operate(id_, completion, &op);
        });
        if (done.r < 0)
            failed_ = create_failure(done.r, "creating the head of blob ");
        head_created_ = !failed_;
        co_return head_created_;
    }

    /// The commit of a blob that never filled a stripe: one exclusive create of the head holding the bytes.
    asio::awaitable<result<void>> commit_inline()
    {
        librados::ObjectWriteOperation op;
        op.create(true);
        if (filled_ > 0)
            op.write_full(filled_bytes());
        op.setxattr(attr_stripe_size, to_bufferlist(std::to_string(stripe_size_)));
        op.setxattr(attr_inline, to_bufferlist("1"));
        set_committed(op, 0);
        c_->inline_writes.fetch_add(1, std::memory_order_relaxed);
        auto done = co_await run_aio([&](librados::AioCompletion* completion, ceph::bufferlist&) {
            return c_->io.aio_operate(id_, completion, &op);
        });
        release_stripe();
        filling_ = false;
        if (done.r < 0)
            failed_ = create_failure(done.r, "writing blob ");
        if (failed_)
            co_return *failed_;
        head_created_ = true;
        committed_ = true;
        co_return ok();
    }

    /// Hands the stripe being filled to librados, which shares (does not copy) its buffer until written,
    /// once the store's write budget grants its bytes; the write's completion returns them. The first
    /// stripe makes the head first.
    asio::awaitable<void> flush()
    {
        if (!head_created_) {
            const bool made = co_await create_head();
            if (!made)
                co_return;
        }
        std::shared_ptr<void> hold;
        if (c_->write_bytes) {
            auto lease = co_await c_->write_bytes->acquire(filled_);
            hold = std::make_shared<write_budget::lease>(std::move(lease));
        }
        auto index = stripes_started_++;
        auto data = filled_bytes();
        release_stripe();
        filling_ = false;
        c_->stripe_writes.fetch_add(1, std::memory_order_relaxed);
        queue_->start(
            index,
            [&c = *c_, name = stripe_name(id_, index), &data](librados::AioCompletion* completion,
                                                              ceph::bufferlist&) {
                return c.io.aio_write_full(name, completion, data);
            },
            std::move(hold));
        cluster::note_peak(c_->peak_writes_in_flight, queue_->pending());
    }

    void collect(const aio_result& done)
    {
        if (done.r < 0 && !failed_)
            failed_ = rados_error(done.r, "writing stripe " + std::to_string(done.tag) + " of blob " + id_);
    }

    asio::awaitable<void> drain()
    {
        while (queue_->pending() > 0)
            collect(co_await queue_->next());
    }

    std::shared_ptr<cluster> c_;
    blob_id id_;
    std::uint64_t stripe_size_;
    std::uint64_t size_hint_;
    std::uint64_t size_ = 0;
    std::shared_ptr<aio_queue> queue_ = aio_queue::make();
    /// The stripe being filled (its first `filled_` bytes); `filling_` once it counts against the window.
    ceph::bufferptr stripe_;
    std::size_t filled_ = 0;
    bool filling_ = false;
    /// Stripes handed to librados so far (and so the stripe count at commit).
    std::uint64_t stripes_started_ = 0;
    /// The first failure; the writer is unusable afterwards.
    std::optional<error> failed_;
    bool committed_ = false;
    bool aborted_ = false;
    /// The head exists in RADOS (made before the first stripe, or by an inline commit).
    bool head_created_ = false;
};

} // namespace

std::unique_ptr<blob_writer> make_writer(std::shared_ptr<cluster> c, blob_id id, std::uint64_t stripe_size,
                                         std::uint64_t size_hint)
{
    return std::make_unique<rados_writer>(std::move(c), std::move(id), stripe_size, size_hint);
}

} // namespace depot::storage::rados_detail
