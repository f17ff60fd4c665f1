#pragma once
/// \file
/// Per-credential request-rate limiting: a token bucket per access key (or API token) refilled at `rate`
/// requests per second up to `burst`. A request over the limit answers 503 SlowDown, as S3 does, and
/// clients back off and retry. Buckets are sharded by key hash so concurrent requests of different callers
/// rarely share a lock; idle buckets are dropped once full again, so memory follows active callers.

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace depot::server {

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

} // namespace depot::server
