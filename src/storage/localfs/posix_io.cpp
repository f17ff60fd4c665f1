#include "storage/localfs/posix_io.hpp"

#include <algorithm>
#include <dirent.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <system_error>
#include <unistd.h>

namespace depot::storage::localfs_io {
namespace {

std::string describe(std::string_view op, std::string_view subject, int err)
{
    std::string out = "localfs: ";
    out += op;
    if (!subject.empty()) {
        out += ' ';
        out += subject;
    }
    out += ": ";
    out += std::system_category().message(err);
    return out;
}

} // namespace

error lookup_error(std::string_view op, std::string_view subject, int err)
{
    if (err == ENOENT || err == ENOTDIR)
        return make_error(errc::not_found, "no blob " + std::string(subject));
    return io_error(op, subject, err);
}

error io_error(std::string_view op, std::string_view subject, int err)
{
    return make_error(errc::io_error, describe(op, subject, err));
}

result<void> write_all_at(int fd, std::span<const std::span<const std::byte>> parts, std::uint64_t offset,
                          std::string_view subject)
{
    // Two iovecs cover every caller (gathered bytes + the new span); more are accepted, in batches.
    constexpr std::size_t batch = 8;
    std::size_t next = 0; // first part not yet fully written
    std::size_t skip = 0; // bytes of parts[next] already written
    while (next < parts.size()) {
        iovec iov[batch];
        int count = 0;
        for (std::size_t i = next; i < parts.size() && count < static_cast<int>(batch); ++i) {
            auto part = i == next ? parts[i].subspan(skip) : parts[i];
            if (part.empty())
                continue;
            iov[count++] = iovec{const_cast<std::byte*>(part.data()), part.size()};
        }
        if (count == 0)
            break;
        ssize_t n = ::pwritev(fd, iov, count, static_cast<off_t>(offset));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return io_error("write", subject, errno);
        }
        if (n == 0)
            return io_error("write", subject, EIO);
        offset += static_cast<std::uint64_t>(n);
        auto left = static_cast<std::size_t>(n);
        while (next < parts.size() && left >= parts[next].size() - skip) {
            left -= parts[next].size() - skip;
            skip = 0;
            ++next;
        }
        skip += left;
    }
    return ok();
}

result<std::size_t> read_at(int fd, std::span<std::byte> buf, std::uint64_t offset, std::string_view subject)
{
    for (;;) {
        ssize_t n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(offset));
        if (n >= 0)
            return static_cast<std::size_t>(n);
        if (errno != EINTR)
            return io_error("read", subject, errno);
    }
}

result<void> sync_dir(const std::string& dir, std::string_view subject)
{
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return io_error("open directory for", subject, errno);
    int rc = ::fsync(fd);
    int err = errno;
    ::close(fd);
    if (rc != 0)
        return io_error("fsync directory for", subject, err);
    return ok();
}

result<std::vector<std::string>> sorted_names(const std::string& dir,
                                              const std::function<bool(std::string_view)>& keep)
{
    DIR* d = ::opendir(dir.c_str());
    if (!d)
        return io_error("list directory", {}, errno);
    std::vector<std::string> names;
    for (;;) {
        errno = 0;
        const dirent* e = ::readdir(d);
        if (!e) {
            int err = errno;
            ::closedir(d);
            if (err != 0)
                return io_error("list directory", {}, err);
            break;
        }
        std::string_view name(e->d_name);
        if (keep(name))
            names.emplace_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
}

std::chrono::system_clock::time_point to_time_point(const timespec& ts)
{
    auto since_epoch = std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
    return std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(since_epoch));
}

void discard(int fd, const std::string& path) noexcept
{
    if (fd >= 0)
        ::close(fd);
    if (!path.empty())
        ::unlink(path.c_str());
}

} // namespace depot::storage::localfs_io
