#include "server/rate_limit.hpp"

#include <algorithm>
#include <functional>
#include <iterator>

namespace depot::server {

bool rate_limiter::admit(std::string_view credential, clock::time_point now)
{
    if (!enabled())
        return true;
    auto& s = shards_[std::hash<std::string_view>{}(credential) % shards_.size()];
    std::lock_guard lock(s.mutex);
    auto refill = [&](bucket& b) {
        const std::chrono::duration<double> elapsed = now - b.updated;
        b.tokens = std::min(burst_, b.tokens + elapsed.count() * rate_);
        b.updated = now;
    };
    // Drop buckets that have refilled completely: they behave exactly like a new one.
    if (now - s.last_sweep > std::chrono::seconds(10)) {
        s.last_sweep = now;
        for (auto it = s.buckets.begin(); it != s.buckets.end();) {
            refill(it->second);
            it = it->second.tokens >= burst_ ? s.buckets.erase(it) : std::next(it);
        }
    }
    auto it = s.buckets.find(std::string(credential));
    if (it == s.buckets.end())
        it = s.buckets.emplace(std::string(credential), bucket{burst_, now}).first;
    refill(it->second);
    if (it->second.tokens < 1)
        return false;
    it->second.tokens -= 1;
    return true;
}

} // namespace depot::server
