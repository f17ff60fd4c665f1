/// \file
/// The local directory blob store.
///
/// On-disk layout under the root directory:
///
///     blobs/<id[0:2]>/<id[2:4]>/<id>    committed blobs, never modified; ids are 32 lower-case hex
///     characters tmp/<id>.part                     blobs being written, invisible to open/stat/list
///
/// The two-level fan-out keeps directories small (65,536 leaves, about 150 entries each at 10M blobs), and
/// because directory names are id prefixes, walking sorted directories lists ids in ascending order.
///
/// Write protocol:
/// 1. create: open tmp/<id>.part with O_CREAT|O_EXCL, mode 0640 (a collision just draws a new id).
/// 2. write: pwritev at the end of the file. Spans under 128 KiB are gathered in memory first, so a caller
///    writing small pieces still produces large writes; larger spans go to the file without a copy.
/// 3. commit: write what is gathered, set the mtime to now (the blob's `modified`), fsync the file, close
///    it, create the fan-out directories if missing (fsyncing their parents), rename the file into blobs/
///    without ever replacing an existing blob (renameat2 RENAME_NOREPLACE), fsync the leaf directory. A
///    failure at any step removes the temporary file, and the renamed file if the last fsync failed, so a
///    failed commit never leaves a visible blob.
/// 4. abort, or a writer destroyed without commit: close and unlink the temporary file (the destructor
///    schedules this on the pool, best effort).
/// With `fsync = false` the fsyncs are skipped (benchmarks only: a crash may then lose committed blobs).
///
/// Crash safety: a crash before the rename leaves only files in tmp/, which nobody sees and which
/// remove_incomplete() unlinks once their mtime (touched by every write) is older than its cutoff. A crash
/// between the rename and the directory fsync may lose the blob, but then commit had not returned, so no
/// metadata can reference it.
///
/// Threads: every system call runs on a private thread pool (`blocking_threads`) through run_blocking; I/O
/// threads only hop there and back. Each reader has its own descriptor and uses pread, so reads of one blob
/// run in parallel, and a blob removed while being read stays readable to readers that opened it before.
#include "storage/localfs/localfs_blob_store.hpp"

#include "common/log.hpp"
#include "storage/localfs/posix_io.hpp"
#include "storage/offload.hpp"

#include <algorithm>
#include <fcntl.h>
#include <mutex>
#include <stdexcept>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_set>

namespace depot::storage {
namespace {

namespace io = localfs_io;
using clock = std::chrono::system_clock;

/// Writes smaller than this are gathered in memory and written together.
constexpr std::size_t gather_capacity = 128 * 1024;
constexpr std::string_view tmp_suffix = ".part";
constexpr std::size_t id_length = 32;

bool is_hex(std::string_view s)
{
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

/// The only ids this store creates; anything else cannot name one of its blobs.
bool is_local_id(std::string_view id)
{
    return id.size() == id_length && is_hex(id);
}

/// State shared by the store and its writers and readers; they keep it (and its pool) alive.
/// The last reference must not be dropped on a pool thread (the destructor joins the pool); nothing posted
/// to the pool holds one.
class localfs_shared
{
public:
    explicit localfs_shared(localfs_options options)
        : options_(std::move(options)), blobs_dir_((options_.root / "blobs").string()),
          tmp_dir_((options_.root / "tmp").string()), pool_(std::max(1u, options_.blocking_threads))
    {
        std::filesystem::create_directories(blobs_dir_);
        std::filesystem::create_directories(tmp_dir_);
    }

    localfs_shared(const localfs_shared&) = delete;
    localfs_shared& operator=(const localfs_shared&) = delete;

    /// Lets cleanup work scheduled by destroyed writers and readers finish before the pool goes away.
    ~localfs_shared() { pool_.join(); }

    asio::thread_pool& pool() noexcept { return pool_; }
    bool fsync() const noexcept { return options_.fsync; }

    std::string tmp_path(std::string_view id) const
    {
        std::string p = tmp_dir_;
        p += '/';
        p += id;
        p += tmp_suffix;
        return p;
    }

    /// blobs/ab, blobs/ab/cd or blobs/ab/cd/<id>, for `levels` 1, 2 or 3.
    std::string blob_path(std::string_view id, int levels = 3) const
    {
        std::string p = blobs_dir_;
        p += '/';
        p += id.substr(0, 2);
        if (levels >= 2) {
            p += '/';
            p += id.substr(2, 2);
        }
        if (levels >= 3) {
            p += '/';
            p += id;
        }
        return p;
    }

    const std::string& blobs_dir() const noexcept { return blobs_dir_; }
    const std::string& tmp_dir() const noexcept { return tmp_dir_; }

    /// Blocking. Creates the temporary file of a new blob; returns its id and descriptor.
    result<std::pair<blob_id, int>> create_file() const
    {
        for (int attempt = 0;; ++attempt) {
            auto id = make_random_blob_id();
            int fd = ::open(tmp_path(id).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
            if (fd >= 0)
                return std::pair{std::move(id), fd};
            if (errno != EEXIST || attempt == 3)
                return io::io_error("create", id, errno);
        }
    }

    /// Blocking. Steps 3 of the write protocol; always closes `fd`. On failure nothing of the blob remains.
    result<void> commit_file(int fd, const blob_id& id, std::span<const std::byte> gathered,
                             std::uint64_t offset)
    {
        const auto tmp = tmp_path(id);
        auto fail = [&](error e) {
            io::discard(fd, tmp);
            return e;
        };
        if (!gathered.empty()) {
            const std::span<const std::byte> parts[] = {gathered};
            if (auto w = io::write_all_at(fd, parts, offset, id); !w)
                return fail(std::move(w).error());
        }
        if (::futimens(fd, nullptr) != 0)
            return fail(io::io_error("set mtime of", id, errno));
        if (options_.fsync && ::fsync(fd) != 0)
            return fail(io::io_error("fsync", id, errno));
        int closed = ::close(fd);
        fd = -1;
        if (closed != 0)
            return fail(io::io_error("close", id, errno));
        for (int level : {1, 2}) {
            if (auto d = ensure_dir(id, level); !d)
                return fail(std::move(d).error());
        }

        const auto final_path = blob_path(id);
        if (auto r = rename_no_replace(tmp, final_path); r != 0) {
            if (r == ENOENT)
                return fail(make_error(errc::io_error,
                                       "localfs: commit " + id +
                                           ": the unfinished blob was reclaimed by remove_incomplete"));
            return fail(io::io_error("rename", id, r));
        }
        if (options_.fsync) {
            if (auto s = io::sync_dir(blob_path(id, 2), id); !s) {
                ::unlink(final_path.c_str());
                return std::move(s).error();
            }
        }
        return ok();
    }

    /// Blocking. Committed blobs with id > after, ascending, at most `limit`.
    result<std::vector<blob_listing_entry>> list_files(const blob_id& after, std::size_t limit) const
    {
        std::vector<blob_listing_entry> out;
        if (limit == 0)
            return out;
        auto fanout = [](std::string_view n) { return n.size() == 2 && is_hex(n); };
        auto top = io::sorted_names(blobs_dir_, fanout);
        if (!top)
            return std::move(top).error();
        // A directory can only hold ids > after if its prefix is >= after's prefix of the same length.
        for (const auto& d1 : *top) {
            if (d1 < std::string_view(after).substr(0, 2))
                continue;
            auto mid = io::sorted_names(blobs_dir_ + '/' + d1, fanout);
            if (!mid)
                return std::move(mid).error();
            for (const auto& d2 : *mid) {
                const auto prefix = d1 + d2;
                if (prefix < std::string_view(after).substr(0, 4))
                    continue;
                const auto leaf = blob_path(prefix, 2);
                auto ids = io::sorted_names(leaf, [&](std::string_view n) {
                    return is_local_id(n) && n.substr(0, 4) == prefix && n > after;
                });
                if (!ids)
                    return std::move(ids).error();
                for (auto& id : *ids) {
                    struct stat st
                    {};
                    if (::stat((leaf + '/' + id).c_str(), &st) != 0) {
                        if (errno == ENOENT) // removed meanwhile
                            continue;
                        return io::io_error("stat", id, errno);
                    }
                    out.push_back({std::move(id),
                                   {.size = static_cast<std::uint64_t>(st.st_size),
                                    .modified = io::to_time_point(st.st_mtim)}});
                    if (out.size() == limit)
                        return out;
                }
            }
        }
        return out;
    }

    /// Blocking. Unlinks temporary files last modified before `older_than`.
    result<std::size_t> remove_stale_files(clock::time_point older_than) const
    {
        auto names = io::sorted_names(tmp_dir_, [](std::string_view n) {
            return n.size() == id_length + tmp_suffix.size() && n.ends_with(tmp_suffix) &&
                   is_local_id(n.substr(0, id_length));
        });
        if (!names)
            return std::move(names).error();
        std::size_t removed = 0;
        for (const auto& name : *names) {
            const auto path = tmp_dir_ + '/' + name;
            const auto id = std::string_view(name).substr(0, id_length);
            struct stat st
            {};
            if (::lstat(path.c_str(), &st) != 0) {
                if (errno == ENOENT) // committed or aborted meanwhile
                    continue;
                return io::io_error("stat unfinished", id, errno);
            }
            if (!S_ISREG(st.st_mode) || io::to_time_point(st.st_mtim) >= older_than)
                continue;
            if (::unlink(path.c_str()) != 0) {
                if (errno == ENOENT)
                    continue;
                return io::io_error("remove unfinished", id, errno);
            }
            ++removed;
        }
        return removed;
    }

private:
    /// Blocking. Makes sure blobs/ab (level 1) or blobs/ab/cd (level 2) exists and its entry is durable.
    result<void> ensure_dir(const blob_id& id, int level)
    {
        const auto key = id.substr(0, level == 1 ? 2 : 4);
        {
            std::lock_guard lock(dirs_mu_);
            if (durable_dirs_.contains(key))
                return ok();
        }
        const auto dir = blob_path(id, level);
        if (::mkdir(dir.c_str(), 0750) != 0 && errno != EEXIST)
            return io::io_error("create directory for", id, errno);
        // Sync the parent even when another thread (or an earlier run) created the directory: we cannot know
        // whether that creation was made durable, and it costs one fsync per directory per process.
        if (options_.fsync) {
            if (auto s = io::sync_dir(level == 1 ? blobs_dir_ : blob_path(id, 1), id); !s)
                return s;
        }
        std::lock_guard lock(dirs_mu_);
        durable_dirs_.insert(key);
        return ok();
    }

    /// rename(2) that fails with EEXIST instead of replacing `to`; returns 0 or an errno.
    static int rename_no_replace(const std::string& from, const std::string& to)
    {
        if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0)
            return 0;
        if (errno != EINVAL && errno != ENOSYS)
            return errno;
        // The file system cannot refuse to replace; link + unlink gives the same guarantee.
        if (::link(from.c_str(), to.c_str()) != 0)
            return errno;
        ::unlink(from.c_str());
        return 0;
    }

    localfs_options options_;
    std::string blobs_dir_;
    std::string tmp_dir_;
    asio::thread_pool pool_;
    std::mutex dirs_mu_;
    std::unordered_set<std::string> durable_dirs_; ///< fan-out directories known to exist durably
};

class localfs_writer final : public blob_writer
{
public:
    localfs_writer(std::shared_ptr<localfs_shared> fs, blob_id id, int fd)
        : fs_(std::move(fs)), id_(std::move(id)), fd_(fd)
    {}

    localfs_writer(const localfs_writer&) = delete;
    localfs_writer& operator=(const localfs_writer&) = delete;

    ~localfs_writer() override
    {
        if (fd_ < 0)
            return;
        try {
            asio::post(fs_->pool(), [fd = fd_, tmp = fs_->tmp_path(id_)] { io::discard(fd, tmp); });
        } catch (...) {
            // Out of memory: the descriptor leaks and remove_incomplete() reclaims the file later.
        }
    }

    const blob_id& id() const noexcept override { return id_; }
    std::uint64_t size() const noexcept override { return size_; }

    asio::awaitable<result<void>> write(std::span<const std::byte> data) override
    {
        require_open("write");
        if (failure_)
            co_return *failure_;
        if (data.size() < gather_capacity && buffer_.size() + data.size() <= gather_capacity) {
            if (buffer_.capacity() == 0)
                buffer_.reserve(gather_capacity);
            buffer_.insert(buffer_.end(), data.begin(), data.end());
            size_ += data.size();
            co_return ok();
        }
        const std::span<const std::byte> parts[] = {buffer_, data};
        auto written =
            co_await run_blocking(fs_->pool(), [&] { return io::write_all_at(fd_, parts, flushed_, id_); });
        if (!written) {
            failure_ = written.error();
            co_return std::move(written).error();
        }
        flushed_ += buffer_.size() + data.size();
        size_ += data.size();
        buffer_.clear();
        co_return ok();
    }

    asio::awaitable<result<void>> commit() override
    {
        require_open("commit");
        if (failure_)
            co_return *failure_;
        auto committed =
            co_await run_blocking(fs_->pool(), [&] { return fs_->commit_file(fd_, id_, buffer_, flushed_); });
        fd_ = -1; // commit_file closes it whatever happens
        buffer_ = {};
        if (!committed) {
            failure_ = committed.error();
            co_return std::move(committed).error();
        }
        committed_ = true;
        co_return ok();
    }

    asio::awaitable<void> abort() override
    {
        if (committed_ || aborted_)
            co_return;
        aborted_ = true;
        buffer_ = {};
        if (fd_ < 0)
            co_return; // a failed commit already removed everything
        // Named, not a temporary: GCC 12 destroys a closure with non-trivial captures twice when it is
        // created inside a co_await expression.
        auto discard = [fd = fd_, tmp = fs_->tmp_path(id_)] { io::discard(fd, tmp); };
        co_await run_blocking(fs_->pool(), std::move(discard));
        fd_ = -1;
    }

private:
    void require_open(const char* op) const
    {
        if (committed_ || aborted_)
            throw std::logic_error(std::string("blob_writer::") + op + " after commit or abort");
    }

    std::shared_ptr<localfs_shared> fs_;
    blob_id id_;
    int fd_;                        ///< -1 once closed
    std::vector<std::byte> buffer_; ///< gathered bytes not yet in the file
    std::uint64_t flushed_ = 0;     ///< bytes in the file
    std::uint64_t size_ = 0;        ///< bytes accepted
    std::optional<error> failure_;  ///< set by a failed write or commit; the writer is then unusable
    bool committed_ = false;
    bool aborted_ = false;
};

class localfs_reader final : public blob_reader
{
public:
    localfs_reader(std::shared_ptr<localfs_shared> fs, blob_id id, int fd, std::uint64_t begin,
                   std::uint64_t end)
        : fs_(std::move(fs)), id_(std::move(id)), fd_(fd), pos_(begin), end_(end)
    {}

    localfs_reader(const localfs_reader&) = delete;
    localfs_reader& operator=(const localfs_reader&) = delete;

    ~localfs_reader() override
    {
        try {
            asio::post(fs_->pool(), [fd = fd_] { ::close(fd); });
        } catch (...) {
            // Out of memory: the descriptor leaks.
        }
    }

    asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override
    {
        auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), end_ - pos_));
        if (want == 0)
            co_return std::size_t{0};
        auto n =
            co_await run_blocking(fs_->pool(), [&] { return io::read_at(fd_, buf.first(want), pos_, id_); });
        if (!n)
            co_return std::move(n).error();
        if (*n == 0)
            co_return make_error(errc::io_error,
                                 "localfs: blob " + id_ + " is shorter than when it was opened");
        pos_ += *n;
        co_return *n;
    }

private:
    std::shared_ptr<localfs_shared> fs_;
    blob_id id_;
    int fd_;
    std::uint64_t pos_;
    std::uint64_t end_;
};

class localfs_blob_store final : public blob_store
{
public:
    explicit localfs_blob_store(localfs_options options)
        : fs_(std::make_shared<localfs_shared>(std::move(options)))
    {}

    asio::awaitable<result<std::unique_ptr<blob_writer>>> create(write_options) override
    {
        auto created = co_await run_blocking(fs_->pool(), [this] { return fs_->create_file(); });
        if (!created)
            co_return std::move(created).error();
        auto& [id, fd] = *created;
        co_return std::make_unique<localfs_writer>(fs_, std::move(id), fd);
    }

    asio::awaitable<result<std::unique_ptr<blob_reader>>> open(const blob_id& id, std::uint64_t offset,
                                                               std::uint64_t length) override
    {
        if (!is_local_id(id))
            co_return not_found(id);
        auto opened = co_await run_blocking(fs_->pool(), [&]() -> result<std::pair<int, std::uint64_t>> {
            int fd = ::open(fs_->blob_path(id).c_str(), O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                return io::lookup_error("open", id, errno);
            struct stat st
            {};
            if (::fstat(fd, &st) != 0) {
                int err = errno;
                ::close(fd);
                return io::io_error("stat", id, err);
            }
            auto size = static_cast<std::uint64_t>(st.st_size);
            if (offset > size) {
                ::close(fd);
                return make_error(errc::invalid_range, "offset is beyond the end of blob " + id);
            }
            ::posix_fadvise(fd, static_cast<off_t>(offset), 0, POSIX_FADV_SEQUENTIAL);
            return std::pair{fd, size};
        });
        if (!opened)
            co_return std::move(opened).error();
        auto [fd, size] = *opened;
        auto end = offset + std::min(length, size - offset);
        co_return std::make_unique<localfs_reader>(fs_, id, fd, offset, end);
    }

    asio::awaitable<result<blob_info>> stat(const blob_id& id) override
    {
        if (!is_local_id(id))
            co_return not_found(id);
        co_return co_await run_blocking(fs_->pool(), [&]() -> result<blob_info> {
            struct stat st
            {};
            if (::stat(fs_->blob_path(id).c_str(), &st) != 0)
                return io::lookup_error("stat", id, errno);
            return blob_info{.size = static_cast<std::uint64_t>(st.st_size),
                             .modified = io::to_time_point(st.st_mtim)};
        });
    }

    asio::awaitable<result<void>> remove(const blob_id& id) override
    {
        if (!is_local_id(id))
            co_return not_found(id);
        co_return co_await run_blocking(fs_->pool(), [&]() -> result<void> {
            if (::unlink(fs_->blob_path(id).c_str()) != 0)
                return io::lookup_error("remove", id, errno);
            return ok();
        });
    }

    asio::awaitable<result<std::vector<blob_listing_entry>>> list(const blob_id& after,
                                                                  std::size_t limit) override
    {
        co_return co_await run_blocking(fs_->pool(), [&] { return fs_->list_files(after, limit); });
    }

    asio::awaitable<result<std::size_t>> remove_incomplete(clock::time_point older_than) override
    {
        co_return co_await run_blocking(fs_->pool(), [&] { return fs_->remove_stale_files(older_than); });
    }

    std::string_view kind() const noexcept override { return "localfs"; }

private:
    static error not_found(const blob_id& id) { return make_error(errc::not_found, "no blob " + id); }

    std::shared_ptr<localfs_shared> fs_;
};

} // namespace

std::unique_ptr<blob_store> make_localfs_blob_store(localfs_options options)
{
    return std::make_unique<localfs_blob_store>(std::move(options));
}

} // namespace depot::storage
