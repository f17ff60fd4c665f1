#include "storage/blob_store.hpp"

#include "common/hash.hpp"

#include <algorithm>

namespace depot::storage {

asio::awaitable<result<std::string>> read_all(blob_store& store, const blob_id& id, std::uint64_t offset,
                                              std::uint64_t length)
{
    auto opened = co_await store.open(id, offset, length);
    if (!opened)
        co_return std::move(opened).error();
    auto& reader = **opened;

    // Grow geometrically from a small first chunk so tiny ranges stay cheap and large ones need few reads.
    constexpr std::size_t first_chunk = 64 * 1024;
    constexpr std::size_t max_chunk = 4 * 1024 * 1024;
    std::string out;
    std::size_t filled = 0;
    for (;;) {
        if (filled == out.size()) {
            auto grow = std::clamp<std::size_t>(out.size(), first_chunk, max_chunk);
            if (length != UINT64_MAX)
                grow = static_cast<std::size_t>(std::min<std::uint64_t>(grow, length - filled + 1));
            out.resize(filled + grow);
        }
        auto n = co_await reader.read_some(
            std::as_writable_bytes(std::span(out.data() + filled, out.size() - filled)));
        if (!n)
            co_return std::move(n).error();
        if (*n == 0)
            break;
        filled += *n;
    }
    out.resize(filled);
    co_return out;
}

blob_id make_random_blob_id()
{
    return to_hex(random_bytes(16));
}

bool is_valid_blob_id(std::string_view id) noexcept
{
    return !id.empty() && id.size() <= 64 && std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z');
    });
}

} // namespace depot::storage
