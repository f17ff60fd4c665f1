#include "storage/rados/cluster.hpp"

#include "common/log.hpp"

#include <cerrno>
#include <charconv>
#include <stdexcept>
#include <system_error>

namespace depot::storage::rados_detail {
namespace {

std::string describe(int r)
{
    return std::error_code(-r, std::generic_category()).message();
}

std::string seconds_of(std::chrono::milliseconds ms)
{
    auto s = (ms.count() + 999) / 1000;
    return std::to_string(s < 1 ? 1 : s);
}

void set_conf(librados::Rados& rados, const char* option, const std::string& value)
{
    if (int r = rados.conf_set(option, value.c_str()); r < 0)
        throw std::runtime_error("rados: cannot set " + std::string(option) + " = " + value + ": " +
                                 describe(r));
}

std::optional<std::uint64_t> parse_u64(std::string_view s)
{
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty())
        return std::nullopt;
    return v;
}

std::optional<std::uint64_t> attr_u64(const std::map<std::string, ceph::bufferlist>& attrs, const char* name)
{
    auto it = attrs.find(name);
    if (it == attrs.end())
        return std::nullopt;
    return parse_u64(it->second.to_str());
}

} // namespace

cluster::cluster(rados_options opts) : options(std::move(opts))
{
    const auto& o = options;
    auto where = "(conf " + (o.conf_file.empty() ? std::string("default") : o.conf_file) + ", user " +
                 o.user + ", pool " + o.pool + ")";
    if (int r = rados.init2(o.user.c_str(), "ceph", 0); r < 0)
        throw std::runtime_error("rados: cannot initialize a client " + where + ": " + describe(r));
    if (int r = rados.conf_read_file(o.conf_file.empty() ? nullptr : o.conf_file.c_str()); r < 0)
        throw std::runtime_error("rados: cannot read the Ceph configuration " + where + ": " + describe(r));
    if (!o.keyring.empty())
        set_conf(rados, "keyring", o.keyring);
    // Bounded waits everywhere: an OSD or monitor outage fails operations with -ETIMEDOUT (unavailable)
    // instead of leaving requests hanging, and a dead cluster fails the connection.
    auto timeout = seconds_of(o.op_timeout);
    // librados would otherwise install Ceph's own SIGSEGV/SIGABRT handlers in our process, which log to
    // Ceph's log (none, for a client) and hide crashes from sanitizers and core dumps.
    set_conf(rados, "fatal_signal_handlers", "false");
    set_conf(rados, "rados_osd_op_timeout", timeout);
    set_conf(rados, "rados_mon_op_timeout", timeout);
    set_conf(rados, "client_mount_timeout", timeout);
    if (int r = rados.connect(); r < 0) {
        rados.shutdown();
        throw std::runtime_error("rados: cannot connect to the Ceph cluster " + where + ": " + describe(r));
    }
    if (int r = rados.ioctx_create(o.pool.c_str(), io); r < 0) {
        rados.shutdown();
        throw std::runtime_error("rados: cannot open the pool " + where + ": " +
                                 (r == -ENOENT ? std::string("no such pool") : describe(r)));
    }
    io.set_namespace(o.ns);
    if (o.write_budget > 0)
        write_bytes = write_budget::make(std::max(o.write_budget, o.stripe_size));
    // Idle stripe buffers kept: as many as the write budget has in flight (at least a window), at most 32;
    // the buffers exist at the peak of an upload anyway, this keeps them for the next one.
    const std::uint64_t in_flight =
        o.write_budget > 0 ? std::max<std::uint64_t>(o.write_budget / o.stripe_size, 1) : o.window;
    stripe_pool = std::make_unique<stripe_buffers>(
        static_cast<std::size_t>(o.stripe_size),
        static_cast<std::size_t>(std::min<std::uint64_t>(std::max<std::uint64_t>(in_flight, o.window), 32)));
}

cluster::~cluster()
{
    // Operations of writers dropped without commit or abort may still be in flight; let them finish before
    // the client goes away (a short wait at shutdown, bounded by the operation timeout).
    io.aio_flush();
    listing_pool.join();
    io.close();
    rados.shutdown();
}

void cluster::note_peak(std::atomic<unsigned>& peak, std::size_t n) noexcept
{
    auto v = static_cast<unsigned>(n);
    auto seen = peak.load(std::memory_order_relaxed);
    while (v > seen && !peak.compare_exchange_weak(seen, v, std::memory_order_relaxed)) {
    }
}

error rados_error(int r, std::string_view what)
{
    auto message = "rados: " + std::string(what) + ": " + describe(r);
    switch (-r) {
    case ENOENT:
        return make_error(errc::not_found, std::move(message));
    case ETIMEDOUT:
    case EIO:
    case ENOTCONN:
    case ECONNREFUSED:
    case ECONNRESET:
    case ESHUTDOWN: // also what librados reports once this client is blocklisted
    case EHOSTUNREACH:
    case ENETUNREACH:
    case EAGAIN:
    case EBUSY:
    case EINTR:
    case ENOSPC: // a full cluster: writes resume once space is freed
    case EDQUOT:
        return make_error(errc::unavailable, std::move(message));
    default:
        return make_error(errc::io_error, std::move(message));
    }
}

std::string stripe_name(std::string_view id, std::uint64_t index)
{
    static constexpr char digits[] = "0123456789abcdef";
    std::string name(id);
    name.push_back('.');
    for (int shift = 28; shift >= 0; shift -= 4)
        name.push_back(digits[(index >> shift) & 0xf]);
    return name;
}

std::optional<object_name> parse_object_name(std::string_view name)
{
    auto dot = name.find('.');
    if (dot == std::string_view::npos) {
        if (!is_valid_blob_id(name))
            return std::nullopt;
        return object_name{blob_id(name), std::nullopt};
    }
    auto id = name.substr(0, dot);
    auto hex = name.substr(dot + 1);
    if (!is_valid_blob_id(id) || hex.size() != 8)
        return std::nullopt;
    std::uint64_t index = 0;
    for (char ch : hex) {
        int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
        if (d < 0)
            return std::nullopt;
        index = index * 16 + static_cast<std::uint64_t>(d);
    }
    return object_name{blob_id(id), index};
}

ceph::bufferlist to_bufferlist(std::string_view s)
{
    ceph::bufferlist bl;
    bl.append(s.data(), static_cast<unsigned>(s.size()));
    return bl;
}

std::optional<head_info> decode_head(const std::map<std::string, ceph::bufferlist>& attrs)
{
    auto state = attrs.find(attr_state);
    auto stripe_size = attr_u64(attrs, attr_stripe_size);
    if (state == attrs.end() || !stripe_size || *stripe_size == 0)
        return std::nullopt;
    head_info head{.stripe_size = *stripe_size};
    auto s = state->second.to_str();
    if (s == state_writing)
        return head;
    if (s != state_committed)
        return std::nullopt;
    auto size = attr_u64(attrs, attr_size);
    auto stripes = attr_u64(attrs, attr_stripes);
    auto committed = attr_u64(attrs, attr_committed);
    if (!size || !stripes || !committed)
        return std::nullopt;
    auto inline_attr = attrs.find(attr_inline);
    head.inline_data = inline_attr != attrs.end() && inline_attr->second.to_str() == "1";
    // The stripe count must be the one the size implies, or reads would run past what was written; an
    // inline blob has none and fits in one.
    if (head.inline_data ? (*stripes != 0 || *size > *stripe_size)
                         : *stripes != *size / *stripe_size + (*size % *stripe_size != 0 ? 1 : 0))
        return std::nullopt;
    head.committed = true;
    head.size = *size;
    head.stripes = *stripes;
    head.committed_at = clock::time_point(std::chrono::duration_cast<clock::duration>(
        std::chrono::nanoseconds(static_cast<std::int64_t>(*committed))));
    return head;
}

asio::awaitable<head_read> read_head(cluster& c, const blob_id& id)
{
    ceph::bufferlist none;
    co_return co_await read_head(c, id, 0, 0, none);
}

asio::awaitable<head_read> read_head(cluster& c, const blob_id& id, std::uint64_t offset,
                                     std::uint64_t length, ceph::bufferlist& data)
{
    std::map<std::string, ceph::bufferlist> attrs;
    int attrs_r = 0;
    int stat_r = 0;
    int read_r = 0;
    std::uint64_t size = 0;
    timespec mtime{};
    librados::ObjectReadOperation op;
    op.getxattrs(&attrs, &attrs_r);
    op.stat2(&size, &mtime, &stat_r);
    if (length > 0)
        op.read(offset, length, &data, &read_r);
    c.head_reads.fetch_add(1, std::memory_order_relaxed);
    auto done = co_await run_aio([&](librados::AioCompletion* completion, ceph::bufferlist& out) {
        return c.io.aio_operate(id, completion, &op, &out);
    });
    head_read read;
    read.r = done.r < 0 ? done.r : attrs_r < 0 ? attrs_r : stat_r < 0 ? stat_r : read_r;
    if (read.r < 0)
        co_return read;
    read.head = decode_head(attrs);
    read.mtime = clock::time_point(std::chrono::duration_cast<clock::duration>(
        std::chrono::seconds(mtime.tv_sec) + std::chrono::nanoseconds(mtime.tv_nsec)));
    co_return read;
}

asio::awaitable<int> remove_head_if(cluster& c, const blob_id& id, std::string_view expected_state)
{
    librados::ObjectWriteOperation op;
    op.cmpxattr(attr_state, LIBRADOS_CMPXATTR_OP_EQ, to_bufferlist(expected_state));
    op.remove();
    // FULL_TRY: removals must work on a full cluster, they are how it stops being full.
    auto done = co_await run_aio([&](librados::AioCompletion* completion, ceph::bufferlist&) {
        return c.io.aio_operate(id, completion, &op, LIBRADOS_OPERATION_FULL_TRY);
    });
    co_return done.r;
}

asio::awaitable<int> remove_stripes(cluster& c, const blob_id& id, std::uint64_t count)
{
    auto queue = aio_queue::make();
    int first_error = 0;
    auto collect = [&](const aio_result& done) {
        if (done.r < 0 && done.r != -ENOENT && first_error == 0)
            first_error = done.r;
    };
    for (std::uint64_t i = 0; i < count; ++i) {
        if (queue->pending() >= c.options.window)
            collect(co_await queue->next());
        queue->start(i,
                     [&c, name = stripe_name(id, i)](librados::AioCompletion* completion, ceph::bufferlist&) {
                         return c.io.aio_remove(name, completion, LIBRADOS_OPERATION_FULL_TRY);
                     });
    }
    while (queue->pending() > 0)
        collect(co_await queue->next());
    if (first_error < 0)
        log::warn("rados: could not remove every stripe of a blob; remove_incomplete will reclaim the rest",
                  {{"blob", id}, {"error", describe(first_error)}});
    co_return first_error;
}

} // namespace depot::storage::rados_detail
