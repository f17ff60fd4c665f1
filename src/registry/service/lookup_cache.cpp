#include "registry/service/lookup_cache.hpp"

#include "common/metrics.hpp"

#include <algorithm>

namespace depot::registry {
namespace {

metrics::family<metrics::counter>& lookups()
{
    return metrics::default_registry().counters(
        "depot_lookup_cache_lookups_total",
        "Access key and bucket lookups of S3 requests, by kind and whether the in-memory cache answered "
        "(negative_hit: an access key id known not to exist).",
        {"kind", "result"});
}

} // namespace

lookup_cache::lookup_cache(options o)
    : options_(o), key_hits_(lookups().add({"key", "hit"})), key_misses_(lookups().add({"key", "miss"})),
      key_negative_hits_(lookups().add({"key", "negative_hit"})),
      bucket_hits_(lookups().add({"bucket", "hit"})), bucket_misses_(lookups().add({"bucket", "miss"})),
      invalidations_(metrics::default_registry().counter_metric(
          "depot_lookup_cache_invalidations_total",
          "Changes to cached access keys and buckets applied to the cache (notified or made here).")),
      live_(metrics::default_registry().gauge_metric(
          "depot_lookup_cache_listening",
          "1 while the cache's LISTEN connection is up and the cache is in use, 0 otherwise."))
{}

std::uint64_t lookup_cache::ticket() const
{
    std::lock_guard lock(mutex_);
    return generation_;
}

template <class T, class Fresh>
std::optional<T> lookup_cache::find_in(const map_of<T>& map, std::string_view name, Fresh fresh,
                                       metrics::counter& hits, metrics::counter& misses) const
{
    const auto now = clock::now();
    {
        std::lock_guard lock(mutex_);
        auto it = map.find(name);
        if (it != map.end() && listening_ && now - it->second.stored < options_.max_age &&
            fresh(it->second.value)) {
            hits.inc();
            return it->second.value;
        }
    }
    misses.inc();
    return std::nullopt;
}

template <class T>
void lookup_cache::store_in(map_of<T>& map, std::uint64_t ticket, const std::string& name, const T& value)
{
    std::lock_guard lock(mutex_);
    if (!listening_ || ticket != generation_ || options_.max_age <= clock::duration::zero())
        return;
    if (map.size() >= options_.max_entries)
        map.clear();
    map.insert_or_assign(name, entry<T>{value, clock::now()});
}

std::optional<access_key> lookup_cache::find_key(std::string_view access_key_id)
{
    return find_in(
        keys_, access_key_id,
        [](const access_key& k) { return !k.expires_at || *k.expires_at > std::chrono::system_clock::now(); },
        key_hits_, key_misses_);
}

void lookup_cache::store_key(std::uint64_t ticket, const access_key& key)
{
    store_in(keys_, ticket, key.access_key_id, key);
}

bool lookup_cache::key_known_missing(std::string_view access_key_id)
{
    const auto now = clock::now();
    std::lock_guard lock(mutex_);
    auto it = missing_keys_.find(access_key_id);
    if (it == missing_keys_.end() || !listening_ ||
        now - it->second.stored >= std::min(options_.negative_max_age, options_.max_age))
        return false;
    key_negative_hits_.inc();
    return true;
}

void lookup_cache::store_missing_key(std::uint64_t ticket, std::string_view access_key_id)
{
    if (options_.negative_max_age <= clock::duration::zero())
        return;
    store_in(missing_keys_, ticket, std::string(access_key_id), true);
}

std::optional<bucket> lookup_cache::find_bucket(std::string_view name)
{
    return find_in(
        buckets_, name, [](const bucket&) { return true; }, bucket_hits_, bucket_misses_);
}

void lookup_cache::store_bucket(std::uint64_t ticket, const bucket& b)
{
    store_in(buckets_, ticket, b.name, b);
}

template <class Drop>
void lookup_cache::invalidate(Drop drop)
{
    invalidations_.inc();
    std::lock_guard lock(mutex_);
    invalidate_locked();
    drop();
}

void lookup_cache::forget_key(std::string_view access_key_id)
{
    invalidate([&] {
        if (auto it = keys_.find(access_key_id); it != keys_.end())
            keys_.erase(it);
        if (auto it = missing_keys_.find(access_key_id); it != missing_keys_.end())
            missing_keys_.erase(it);
    });
}

void lookup_cache::forget_bucket(std::string_view name)
{
    invalidate([&] {
        if (auto it = buckets_.find(name); it != buckets_.end())
            buckets_.erase(it);
    });
}

void lookup_cache::forget_bucket_id(std::int64_t id)
{
    invalidate([&] { std::erase_if(buckets_, [id](const auto& e) { return e.second.value.id == id; }); });
}

void lookup_cache::notified(std::string_view payload)
{
    if (payload.starts_with("key:"))
        return forget_key(payload.substr(4));
    if (payload.starts_with("bucket:"))
        return forget_bucket(payload.substr(7));
    invalidate([&] {
        keys_.clear();
        missing_keys_.clear();
        buckets_.clear();
    });
}

void lookup_cache::set_listening(bool on)
{
    std::lock_guard lock(mutex_);
    invalidate_locked();
    keys_.clear();
    missing_keys_.clear();
    buckets_.clear();
    listening_ = on;
    live_.set(on ? 1 : 0);
}

void lookup_cache::listening()
{
    set_listening(true);
}

void lookup_cache::not_listening()
{
    set_listening(false);
}

bool lookup_cache::is_listening() const
{
    std::lock_guard lock(mutex_);
    return listening_;
}

} // namespace depot::registry
