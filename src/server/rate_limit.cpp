#include "server/rate_limit.hpp"

#include "common/metrics.hpp"

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <functional>
#include <iterator>

namespace depot::server {

namespace asio = boost::asio;

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

std::string address_key(std::string_view address)
{
    boost::system::error_code ec;
    auto a = asio::ip::make_address(std::string(address), ec);
    if (ec)
        return std::string(address);
    if (a.is_v4())
        return a.to_string();
    auto v6 = a.to_v6();
    if (v6.is_v4_mapped())
        return asio::ip::make_address_v4(asio::ip::v4_mapped, v6).to_string();
    auto bytes = v6.to_bytes();
    std::fill(bytes.begin() + 8, bytes.end(), 0);
    return asio::ip::address_v6(bytes).to_string() + "/64";
}

bool address_counter::try_add(const std::string& key, std::size_t limit)
{
    std::lock_guard lock(mutex_);
    auto& n = open_[key];
    if (limit != 0 && n >= limit) {
        if (n == 0)
            open_.erase(key);
        return false;
    }
    ++n;
    return true;
}

void address_counter::remove(const std::string& key)
{
    std::lock_guard lock(mutex_);
    auto it = open_.find(key);
    if (it == open_.end())
        return;
    if (--it->second == 0)
        open_.erase(it);
}

std::size_t address_counter::count(const std::string& key) const
{
    std::lock_guard lock(mutex_);
    auto it = open_.find(key);
    return it == open_.end() ? 0 : it->second;
}

auth_failure_limiter::auth_failure_limiter(options o)
    : options_(o), limited_(metrics::default_registry().counter_metric(
                       "depot_auth_failure_limited_requests_total",
                       "Requests refused without authentication because their client address failed to "
                       "authenticate too often (--auth-failure-limit)."))
{}

auth_failure_limiter::shard& auth_failure_limiter::shard_of(const std::string& key)
{
    return shards_[std::hash<std::string>{}(key) % shards_.size()];
}

std::optional<auth_failure_limiter::clock::duration> auth_failure_limiter::refused(const std::string& key,
                                                                                   clock::time_point now)
{
    if (!enabled())
        return std::nullopt;
    auto& s = shard_of(key);
    std::lock_guard lock(s.mutex);
    auto it = s.records.find(key);
    if (it == s.records.end() || it->second.blocked_until <= now)
        return std::nullopt;
    limited_.inc();
    return it->second.blocked_until - now;
}

void auth_failure_limiter::failed(const std::string& key, clock::time_point now)
{
    if (!enabled())
        return;
    auto& s = shard_of(key);
    std::lock_guard lock(s.mutex);
    // Records whose window and cool-down are both over behave exactly like no record.
    if (now - s.last_sweep > std::chrono::seconds(10)) {
        s.last_sweep = now;
        std::erase_if(s.records, [&](const auto& e) {
            return e.second.blocked_until <= now && now - e.second.window_start >= options_.window;
        });
    }
    auto& r = s.records[key];
    if (r.failures == 0 || now - r.window_start >= options_.window) {
        r.window_start = now;
        r.failures = 0;
    }
    if (++r.failures >= options_.limit) {
        r.blocked_until = now + options_.cooldown;
        r.failures = 0;
    }
}

} // namespace depot::server
