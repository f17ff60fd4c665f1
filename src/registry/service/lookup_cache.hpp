#pragma once
/// \file
/// The access keys and buckets every S3 request starts by looking up, kept in memory. Without it a GET asks
/// PostgreSQL three questions, two of them about rows that almost never change; radosgw answers those from
/// its user and bucket caches too.
///
/// Correctness rests on PostgreSQL's notifications, not on a timeout. Schema 0012 has triggers that NOTIFY
/// the channel `depot_cache` at the commit of every change to a cached row, whoever makes it (any depotd,
/// depotctl, psql), and a thread of depotd LISTENs (server.cpp). The cache serves and stores entries only
/// while that LISTEN connection is up: going up drops everything (notices sent while down are lost), going
/// down stops all use. A change made by this process is also applied at once by the repository that made
/// it (forget_*), so a request after the change's response never sees the old row; other processes' changes
/// arrive with the notification, milliseconds after their commit. Entries also expire after `max_age`, as a
/// second line of defence.
///
/// Access key ids that were not found are remembered too, for `negative_max_age` only: a client sending
/// requests signed with an unknown key id, which fail before any other check, would otherwise cost one
/// query each. Schema 0014 makes the access_keys trigger notify inserts as well, so a key created later
/// with that id (depotctl can choose ids) is found at once by every depotd. Unknown buckets are not
/// remembered: every bucket lookup comes after a successful authentication.
///
/// The ticket closes the race between a lookup and a change: a lookup takes a ticket before it reads the
/// database and stores its answer only if nothing was invalidated since. An answer read before a change
/// committed is therefore either refused here or erased later by the change's notice.

#include "registry/types.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace depot::metrics {
class counter;
class gauge;
} // namespace depot::metrics

namespace depot::registry {

class lookup_cache
{
public:
    struct options
    {
        /// How long an entry may be served; 0 turns the cache off (nothing is stored).
        std::chrono::steady_clock::duration max_age = std::chrono::seconds(60);
        /// Per kind; a full map is emptied (simple, and a working set that large is not the case served).
        std::size_t max_entries = 100000;
        /// How long an access key id that was not found is answered "not found" without a query (capped
        /// by max_age); 0 = never.
        std::chrono::steady_clock::duration negative_max_age = std::chrono::seconds(5);
    };

    explicit lookup_cache(options o);

    /// Taken before reading the database; see the file comment.
    std::uint64_t ticket() const;

    /// An active key (secret included) whose expiry, if any, is still ahead; nullopt otherwise.
    std::optional<access_key> find_key(std::string_view access_key_id);
    void store_key(std::uint64_t ticket, const access_key& key);
    /// Whether `access_key_id` was recently looked up and not found (no active key with that id); counts a
    /// negative hit when so.
    bool key_known_missing(std::string_view access_key_id);
    /// Remembers that no active key has the id `access_key_id`, under the same ticket rule as store_key.
    void store_missing_key(std::uint64_t ticket, std::string_view access_key_id);
    std::optional<bucket> find_bucket(std::string_view name);
    void store_bucket(std::uint64_t ticket, const bucket& b);

    void forget_key(std::string_view access_key_id);
    void forget_bucket(std::string_view name);
    void forget_bucket_id(std::int64_t id);
    /// Applies one payload of `depot_cache`: "key:<id>", "bucket:<name>"; anything else drops everything.
    void notified(std::string_view payload);

    /// The LISTEN connection is up: everything cached before is dropped, then entries are served again.
    void listening();
    /// The LISTEN connection is down: nothing is served or stored until listening() again.
    void not_listening();
    bool is_listening() const;

private:
    template <class T>
    struct entry
    {
        T value;
        std::chrono::steady_clock::time_point stored;
    };
    using clock = std::chrono::steady_clock;

    template <class T>
    using map_of = std::map<std::string, entry<T>, std::less<>>;

    void invalidate_locked() { ++generation_; }
    /// Counts an invalidation and runs `drop` under the lock with the generation bumped.
    template <class Drop>
    void invalidate(Drop drop);
    /// Empties both maps and turns serving on or off.
    void set_listening(bool on);
    /// The entry `name` if it may be served (listening, younger than max_age, `fresh(value)`); counts it.
    template <class T, class Fresh>
    std::optional<T> find_in(const map_of<T>& map, std::string_view name, Fresh fresh, metrics::counter& hits,
                             metrics::counter& misses) const;
    /// Stores `value` unless something was invalidated since `ticket` or the cache is not listening.
    template <class T>
    void store_in(map_of<T>& map, std::uint64_t ticket, const std::string& name, const T& value);

    options options_;
    mutable std::mutex mutex_;
    bool listening_ = false;
    std::uint64_t generation_ = 0;
    map_of<access_key> keys_;
    map_of<bool> missing_keys_;
    map_of<bucket> buckets_;
    metrics::counter& key_hits_;
    metrics::counter& key_misses_;
    metrics::counter& key_negative_hits_;
    metrics::counter& bucket_hits_;
    metrics::counter& bucket_misses_;
    metrics::counter& invalidations_;
    metrics::gauge& live_;
};

} // namespace depot::registry
