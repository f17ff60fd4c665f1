#include "s3_util.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>

namespace depot::bench {
namespace {

constexpr std::size_t pool_size = 1 << 20; // a power of two: offsets wrap with a mask
constexpr std::uint64_t stamp_every = 64 * 1024;

std::uint64_t splitmix64(std::uint64_t& state)
{
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

} // namespace

content_generator::content_generator(content_kind kind, std::uint64_t seed) : kind_(kind), pool_(pool_size)
{
    std::uint64_t state = seed;
    for (std::size_t i = 0; i < pool_size; i += 8) {
        auto v = splitmix64(state);
        std::memcpy(pool_.data() + i, &v, 8);
    }
    // Random content must differ between runs too, or a second run would be deduplicated against the first.
    std::random_device rd;
    nonce_ = (static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^
             static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

void content_generator::fill(std::uint64_t object_id, std::uint64_t offset, std::span<char> out) const
{
    std::size_t done = 0;
    while (done < out.size()) {
        std::uint64_t at = offset + done;
        std::size_t in_pool = static_cast<std::size_t>(at & (pool_size - 1));
        std::size_t n = std::min(out.size() - done, pool_size - in_pool);
        std::memcpy(out.data() + done, pool_.data() + in_pool, n);
        done += n;
    }
    if (kind_ != content_kind::random)
        return;
    // A 24-byte stamp (nonce, object, block offset) at the start of every 64 KiB block, clipped to `out`.
    std::uint64_t first_block = offset / stamp_every * stamp_every;
    for (std::uint64_t block = first_block; block < offset + out.size(); block += stamp_every) {
        std::uint64_t stamp[3] = {nonce_, object_id, block};
        const char* src = reinterpret_cast<const char*>(stamp);
        for (std::size_t i = 0; i < sizeof stamp; ++i) {
            std::uint64_t at = block + i;
            if (at >= offset && at < offset + out.size())
                out[static_cast<std::size_t>(at - offset)] = src[i];
        }
    }
}

std::string xml_value(std::string_view xml, std::string_view tag)
{
    std::string open = "<" + std::string(tag) + ">";
    std::string close = "</" + std::string(tag) + ">";
    auto b = xml.find(open);
    if (b == std::string_view::npos)
        return {};
    b += open.size();
    auto e = xml.find(close, b);
    if (e == std::string_view::npos)
        return {};
    std::string_view raw = xml.substr(b, e - b);
    std::string out;
    out.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] != '&') {
            out.push_back(raw[i]);
            continue;
        }
        static const std::pair<std::string_view, char> entities[] = {
            {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
        bool matched = false;
        for (const auto& [name, c] : entities) {
            if (raw.substr(i, name.size()) == name) {
                out.push_back(c);
                i += name.size() - 1;
                matched = true;
                break;
            }
        }
        if (!matched)
            out.push_back('&');
    }
    return out;
}

std::size_t xml_count(std::string_view xml, std::string_view tag)
{
    std::string open = "<" + std::string(tag) + ">";
    std::size_t n = 0;
    for (auto at = xml.find(open); at != std::string_view::npos; at = xml.find(open, at + open.size()))
        ++n;
    return n;
}

std::string object_key(std::string_view prefix, std::uint64_t id)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "o%010llu", static_cast<unsigned long long>(id));
    std::string key(prefix);
    if (!key.empty())
        key.push_back('/');
    return key + buf;
}

} // namespace depot::bench
