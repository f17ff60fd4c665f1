#pragma once
/// \file
/// Small helpers for storage tests: running a coroutine to completion, deterministic test content and
/// temporary directories.

#include "common/hash.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

namespace depot::storage::testing {

namespace asio = boost::asio;

/// Runs `aw` to completion on a fresh single-threaded io_context in the calling thread and returns its value;
/// an exception escaping the coroutine (including a failed doctest REQUIRE) is rethrown here.
template <class T>
T run(asio::awaitable<T> aw)
{
    asio::io_context ioc;
    std::exception_ptr failure;
    if constexpr (std::is_void_v<T>) {
        asio::co_spawn(ioc, std::move(aw), [&](std::exception_ptr e) { failure = e; });
        ioc.run();
        if (failure)
            std::rethrow_exception(failure);
    } else {
        // co_spawn of an awaitable<T> needs a default-constructible T; result<T> is not, so wrap it.
        std::optional<T> out;
        asio::co_spawn(
            ioc, [&]() -> asio::awaitable<void> { out.emplace(co_await std::move(aw)); },
            [&](std::exception_ptr e) { failure = e; });
        ioc.run();
        if (failure)
            std::rethrow_exception(failure);
        return std::move(*out);
    }
}

/// `n` pseudo-random bytes determined by `seed` (splitmix64), as a string so comparisons print readably.
inline std::string make_content(std::size_t n, std::uint64_t seed)
{
    std::string out(n, '\0');
    std::uint64_t x = seed;
    for (std::size_t i = 0; i < n; i += 8) {
        x += 0x9e3779b97f4a7c15ULL;
        std::uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        for (std::size_t j = 0; j < 8 && i + j < n; ++j)
            out[i + j] = static_cast<char>((z >> (8 * j)) & 0xff);
    }
    return out;
}

/// The bytes of a string, for blob_writer::write.
inline std::span<const std::byte> bytes_of(std::string_view s)
{
    return std::as_bytes(std::span(s.data(), s.size()));
}

/// A fresh directory under the system temp dir, removed with its contents on destruction.
struct temp_dir
{
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("depot-storage-test-" + to_hex(random_bytes(8)));
    temp_dir() { std::filesystem::create_directories(path); }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    ~temp_dir()
    {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

} // namespace depot::storage::testing
