#pragma once
/// \file
/// What the RADOS store, its writers and its readers share: the librados client and I/O context, the
/// object naming and head (manifest) format, error mapping and counters. Internal to storage/rados.

#include "common/error.hpp"
#include "storage/blob_store.hpp"
#include "storage/rados/aio_queue.hpp"
#include "storage/rados/rados_blob_store.hpp"
#include "storage/rados/stripe_buffers.hpp"
#include "storage/rados/write_budget.hpp"

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <rados/librados.hpp>
#include <string>
#include <string_view>

namespace depot::storage::rados_detail {

using clock = std::chrono::system_clock;

/// The connection every operation of one store goes through. Thread-safe: librados clients and I/O
/// contexts may be used from any thread as long as their settings (namespace, ...) do not change, and
/// they never change after construction.
struct cluster
{
    explicit cluster(rados_options opts);
    ~cluster();
    cluster(const cluster&) = delete;
    cluster& operator=(const cluster&) = delete;

    /// Records that one writer (or reader) has `n` operations in flight, for the peak counters.
    static void note_peak(std::atomic<unsigned>& peak, std::size_t n) noexcept;

    rados_options options;
    librados::Rados rados;
    librados::IoCtx io;
    /// Bytes of stripe writes in flight over every writer (null: options.write_budget is 0, no bound).
    std::shared_ptr<write_budget> write_bytes;
    /// Reused buffers of options.stripe_size for the writers' stripes.
    std::unique_ptr<stripe_buffers> stripe_pool;
    /// librados lists objects only synchronously; listings run here, never on an I/O thread.
    boost::asio::thread_pool listing_pool{1};

    std::atomic<std::uint64_t> stripe_writes{0};
    std::atomic<std::uint64_t> inline_writes{0};
    std::atomic<std::uint64_t> stripe_reads{0};
    std::atomic<std::uint64_t> head_reads{0};
    std::atomic<unsigned> peak_writes_in_flight{0};
    std::atomic<unsigned> peak_reads_in_flight{0};
};

/// A librados failure as a blob-store error: -ENOENT is not_found; timeouts, I/O errors, lost connections
/// and a full cluster are unavailable (retriable); anything else is io_error. `what` says what failed.
error rados_error(int r, std::string_view what);

/// The RADOS object holding stripe `index` of blob `id`: "<id>.<index as 8 lower-case hex digits>". Ids have
/// no '.', so stripe names never collide with heads (which are named by the id itself).
std::string stripe_name(std::string_view id, std::uint64_t index);

/// Stripes can be numbered up to this (8 hex digits).
inline constexpr std::uint64_t max_stripes = 0x1'0000'0000ULL;

/// How an object name found in the namespace relates to blobs.
struct object_name
{
    blob_id id;
    /// Set for a stripe, empty for a head.
    std::optional<std::uint64_t> stripe;
};

/// Parses a head or stripe name; nullopt for anything else (foreign objects are left alone).
std::optional<object_name> parse_object_name(std::string_view name);

/// Head extended attributes. A head is created when the writer is, in state "writing"; commit turns it
/// into "committed" and adds size, stripe count and commit time in one atomic operation.
inline constexpr const char* attr_state = "depot.state";
inline constexpr const char* attr_stripe_size = "depot.stripe_size";
inline constexpr const char* attr_size = "depot.size";
inline constexpr const char* attr_stripes = "depot.stripes";
inline constexpr const char* attr_committed = "depot.committed_ns";
/// "1" on the head of a blob whose bytes are the head object's own data (a blob of at most one stripe,
/// written whole at commit); such a head has 0 stripes.
inline constexpr const char* attr_inline = "depot.inline";
inline constexpr std::string_view state_writing = "writing";
inline constexpr std::string_view state_committed = "committed";

/// A bufferlist holding a copy of `s`.
ceph::bufferlist to_bufferlist(std::string_view s);

struct head_info
{
    bool committed = false;
    std::uint64_t stripe_size = 0;
    /// The rest is only meaningful once committed.
    std::uint64_t size = 0;
    std::uint64_t stripes = 0;
    /// The bytes are the head object's data, not stripes.
    bool inline_data = false;
    clock::time_point committed_at;
};

/// Decodes a head's attributes; nullopt when they are missing or inconsistent (not a head this store
/// wrote, or damaged).
std::optional<head_info> decode_head(const std::map<std::string, ceph::bufferlist>& attrs);

/// One head read: its attributes and its last modification time, in one RADOS operation.
struct head_read
{
    /// 0, or the -errno the read failed with.
    int r = 0;
    /// nullopt when r == 0 but the object is not a well-formed head.
    std::optional<head_info> head;
    clock::time_point mtime;
};

asio::awaitable<head_read> read_head(cluster& c, const blob_id& id);

/// read_head that also reads up to `length` bytes at `offset` of the head object's own data into `data`, in
/// the same operation: an inline blob's bytes come with its head (a small GET is one RADOS operation).
asio::awaitable<head_read> read_head(cluster& c, const blob_id& id, std::uint64_t offset,
                                     std::uint64_t length, ceph::bufferlist& data);

/// Removes the head of `id` if its state is `expected_state`, atomically. 0, -ENOENT (no head),
/// -ECANCELED (another state) or another -errno.
asio::awaitable<int> remove_head_if(cluster& c, const blob_id& id, std::string_view expected_state);

/// Removes stripes [0, count) of `id`, `window` at a time; missing stripes are fine. Returns 0 or the first
/// other -errno met (it still tries every stripe).
asio::awaitable<int> remove_stripes(cluster& c, const blob_id& id, std::uint64_t count);

/// Writer and reader factories (rados_writer.cpp, rados_reader.cpp). The writer creates the head itself:
/// before its first stripe, or at commit together with the bytes when they fit in one stripe.
std::unique_ptr<blob_writer> make_writer(std::shared_ptr<cluster> c, blob_id id, std::uint64_t stripe_size,
                                         std::uint64_t size_hint);
/// Reads bytes [begin, end) of a committed blob described by `head`. For an inline blob, `prefetched` may
/// hold those bytes already (read with its head).
std::unique_ptr<blob_reader> make_reader(std::shared_ptr<cluster> c, blob_id id, const head_info& head,
                                         std::uint64_t begin, std::uint64_t end,
                                         std::optional<ceph::bufferlist> prefetched = std::nullopt);

} // namespace depot::storage::rados_detail
