#pragma once
/// \file
/// depotd's maintenance, apart from serving requests: the cleanup loop (every --cleanup-interval: multipart
/// uploads past --multipart-max-age aborted, bucket lifecycle rules, unreachable blobs collected, ended
/// console sessions deleted, audit rows past --audit-retention archived), the seal loop (audit rows linked
/// into the hash chain every --audit-seal-interval), the intent loop (the lease of this process's uploads in
/// flight renewed every registry::intent_renewal) and the LISTEN thread of the lookup cache. `run`
/// (server.cpp) starts them and stops them at shutdown; each failure is logged and retried on the next
/// round. The work itself is the registry services'.

#include "server/services.hpp"

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <thread>

namespace depot::server {

namespace asio = boost::asio;

class connection_registry;

/// Aborts multipart uploads older than the configured age and reclaims blob-store space no metadata can
/// reach (writes a crash cut short, blobs whose publishing transaction never committed). Safe with several
/// depotd processes: each upload is aborted under its row lock, and removing a blob twice is harmless.
/// Then ended console sessions and, with --audit-retention, old audit rows. Until `registry` stops or
/// `timer` is cancelled.
asio::awaitable<void> cleanup_loop(services& svc, asio::steady_timer& timer,
                                   const connection_registry& registry);

/// Renews the lease of this process's intents (registry/service/content.hpp) every intent_renewal, until
/// `timer` is cancelled: after the last connection closed, since uploads still draining need their
/// intents.
asio::awaitable<void> intent_loop(services& svc, asio::steady_timer& timer);

/// Links committed audit rows into the hash chain every --audit-seal-interval after this process appended
/// rows, and every 50 intervals regardless. Until `registry` stops or `timer` is cancelled.
asio::awaitable<void> seal_loop(services& svc, asio::steady_timer& timer,
                                const connection_registry& registry);

/// The LISTEN half of the lookup cache (registry/service/lookup_cache.hpp): a thread of its own that feeds
/// the cache the notices of schema 0012's triggers and tells it whether it is listening. Off without a TTL.
class lookup_cache_listener
{
public:
    explicit lookup_cache_listener(services& svc) : svc_(svc) {}
    ~lookup_cache_listener();
    lookup_cache_listener(const lookup_cache_listener&) = delete;
    lookup_cache_listener& operator=(const lookup_cache_listener&) = delete;

    void start();
    void stop() { stopping_ = true; }

private:
    services& svc_;
    std::atomic<bool> stopping_{false};
    std::thread thread_;
};

} // namespace depot::server
