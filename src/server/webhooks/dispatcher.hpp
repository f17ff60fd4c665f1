#pragma once
/// \file
/// The webhook dispatcher of one depotd: delivers the outbox (schema/0007_events.sql) to subscribers.
///
/// - Wake-up: a thread holds a plain libpq connection that LISTENs on `depot_events` (the pg layer's
///   connections do not deliver notifications) and wakes the workers on every NOTIFY and after every
///   reconnect; the workers also poll every --webhook-poll-interval (retries come due, a missed notify).
/// - Workers (--webhook-concurrency, on one strand) claim one due delivery at a time with FOR UPDATE SKIP
///   LOCKED and a lease, POST it, and record the attempt. Several depotd processes share the work; a crash
///   mid-attempt leaves a lease that expires, and the delivery is attempted again (at-least-once).
/// - A request: POST, Content-Type application/json, Standard Webhooks headers (webhook-id = "evt_<id>",
///   webhook-timestamp, webhook-signature = "v1,<base64 HMAC-SHA256(secret, id.timestamp.body)>", one per
///   active secret), within --webhook-timeout, to an address that passed the target check. A 2xx answer
///   delivers; anything else (a redirect is never followed) is a failure retried with exponential backoff.
/// - Version events (and alias.updated) get the version's manifest at delivery time, each file with a
///   presigned GET URL into the S3 model view, signed by the team's event-link key (a team reader created
///   on first use), valid for --event-url-expiry from the attempt.

#include "registry/service/webhooks.hpp"
#include "server/webhooks/manifest.hpp"

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <map>
#include <memory>
#include <thread>

namespace depot::server {
struct services;
}

namespace depot::server::webhooks {

namespace asio = boost::asio;

class dispatcher
{
public:
    /// `svc.webhooks` must be set. Nothing runs until start().
    dispatcher(services& svc, asio::io_context& ioc);
    ~dispatcher();
    dispatcher(const dispatcher&) = delete;
    dispatcher& operator=(const dispatcher&) = delete;

    void start();
    /// Stops claiming; attempts in flight finish (bounded by the timeout). The listener thread ends within
    /// a fraction of a second and is joined by the destructor.
    void stop();
    /// Thread-safe: makes idle workers look for due deliveries now.
    void wake();

    const std::string& instance() const noexcept { return instance_; }

private:
    asio::awaitable<void> worker(std::size_t index);
    asio::awaitable<void> deliver(registry::claimed_delivery d);
    asio::awaitable<std::string> body_of(const registry::claimed_delivery& d);
    asio::awaitable<std::optional<link_key>> event_key_of(std::int64_t team_id, const std::string& team);
    void listen_loop();

    services& svc_;
    asio::io_context& ioc_;
    asio::strand<asio::io_context::executor_type> strand_;
    std::string instance_;
    std::atomic<bool> stopping_{false};
    std::uint64_t generation_ = 0;            ///< on the strand: bumped by every wake
    std::vector<asio::steady_timer*> timers_; ///< on the strand: the idle workers' timers
    std::map<std::int64_t, link_key> keys_;   ///< on the strand
    std::thread listener_;
};

} // namespace depot::server::webhooks
