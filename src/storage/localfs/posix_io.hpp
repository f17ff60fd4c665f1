#pragma once
/// \file
/// Thin wrappers over the POSIX calls the localfs store makes, turning errno into `depot::error`. Every
/// function here blocks: call them only on the store's blocking pool. Messages name the operation and the
/// blob id (never a full path, which would leak the server's layout to clients) plus strerror.

#include "common/result.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <time.h>
#include <vector>

namespace depot::storage::localfs_io {

/// errno from a lookup of a committed blob: ENOENT/ENOTDIR → not_found, anything else → io_error.
error lookup_error(std::string_view op, std::string_view subject, int err);

/// errno from any other operation: always io_error (a missing directory there is a broken store).
error io_error(std::string_view op, std::string_view subject, int err);

/// Writes every byte of `parts`, in order, at `offset` (pwritev; retries partial writes and EINTR).
result<void> write_all_at(int fd, std::span<const std::span<const std::byte>> parts, std::uint64_t offset,
                          std::string_view subject);

/// Reads up to `buf.size()` bytes at `offset` (pread; retries EINTR). 0 means end of file.
result<std::size_t> read_at(int fd, std::span<std::byte> buf, std::uint64_t offset, std::string_view subject);

/// Opens `dir` and fsyncs it, making entries created or renamed in it durable.
result<void> sync_dir(const std::string& dir, std::string_view subject);

/// Names in `dir` for which `keep` returns true, sorted ascending (byte order). io_error if `dir` cannot be
/// read; entries vanishing meanwhile are simply absent.
result<std::vector<std::string>> sorted_names(const std::string& dir,
                                              const std::function<bool(std::string_view)>& keep);

/// A file timestamp as a system_clock time point.
std::chrono::system_clock::time_point to_time_point(const timespec& ts);

/// Closes `fd` and unlinks `path`, ignoring errors; for cleanup paths that cannot report anything.
void discard(int fd, const std::string& path) noexcept;

} // namespace depot::storage::localfs_io
