#pragma once
/// \file
/// Request-rate and abuse limits.
///
/// - rate_limiter: per credential (access key or API token), a token bucket refilled at `rate` requests per
///   second up to `burst`. A request over the limit answers 503 SlowDown, as S3 does, and clients back off
///   and retry. Buckets are sharded by key hash so concurrent requests of different callers rarely share a
///   lock; idle buckets are dropped once full again, so memory follows active callers.
/// - address_counter: open connections per client address, so that one address cannot take every
///   --max-connections slot.
/// - auth_failure_limiter: failed authentications per client address. After `limit` failures within
///   `window`, every request from the address is refused for `cooldown` before anything else runs (no
///   signature check, no database query): guessing secrets or flooding unknown key ids then costs the
///   attacker time instead of costing depotd queries.
///
/// Addresses are grouped by address_key(): an IPv4 address on its own, an IPv6 address by its /64 (one
/// subscriber usually holds a whole /64, so counting single IPv6 addresses would be no limit at all).

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace depot::metrics {
class counter;
} // namespace depot::metrics

namespace depot::server {

/// The unit limits count by: the IPv4 address (also for IPv4-mapped IPv6), or the IPv6 /64
/// ("2001:db8:1:2::/64"). Text that is not an address is returned as it is.
std::string address_key(std::string_view address);

class rate_limiter
{
public:
    using clock = std::chrono::steady_clock;

    /// `rate` = 0 disables limiting.
    rate_limiter(double rate, double burst) : rate_(rate), burst_(burst < 1 ? 1 : burst) {}

    bool enabled() const noexcept { return rate_ > 0; }

    /// Takes one token for `credential`; false when its bucket is empty.
    bool admit(std::string_view credential, clock::time_point now = clock::now());

private:
    struct bucket
    {
        double tokens = 0;
        clock::time_point updated;
    };
    struct shard
    {
        std::mutex mutex;
        std::unordered_map<std::string, bucket> buckets;
        clock::time_point last_sweep;
    };

    double rate_;
    double burst_;
    std::array<shard, 16> shards_;
};

/// Open connections per address key. Thread-safe.
class address_counter
{
public:
    /// Counts one more connection of `key` unless `limit` are already open (0 = no limit); false = refused.
    bool try_add(const std::string& key, std::size_t limit);
    /// Uncounts a connection counted by try_add.
    void remove(const std::string& key);
    std::size_t count(const std::string& key) const;

private:
    mutable std::mutex mutex_;
    std::unordered_map<std::string, std::size_t> open_;
};

class auth_failure_limiter
{
public:
    using clock = std::chrono::steady_clock;

    struct options
    {
        /// Failures within `window` that start a cool-down; 0 turns the limiter off.
        unsigned limit = 0;
        std::chrono::seconds window{60};
        std::chrono::seconds cooldown{60};
    };

    /// Registers depot_auth_failure_limited_requests_total (at zero) in the default metrics registry.
    explicit auth_failure_limiter(options o);

    bool enabled() const noexcept { return options_.limit > 0; }

    /// While `key` is cooling down: how long it still has to wait (refused requests are counted in
    /// depot_auth_failure_limited_requests_total). nullopt = the request may proceed.
    std::optional<clock::duration> refused(const std::string& key, clock::time_point now = clock::now());
    /// Records a failed authentication from `key`; the limit-th within a window starts its cool-down.
    void failed(const std::string& key, clock::time_point now = clock::now());

private:
    struct record
    {
        clock::time_point window_start;
        unsigned failures = 0;
        clock::time_point blocked_until;
    };
    struct shard
    {
        std::mutex mutex;
        std::unordered_map<std::string, record> records;
        clock::time_point last_sweep;
    };
    shard& shard_of(const std::string& key);

    options options_;
    metrics::counter& limited_;
    std::array<shard, 16> shards_;
};

} // namespace depot::server
