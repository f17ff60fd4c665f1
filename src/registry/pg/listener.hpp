#pragma once
/// \file
/// A blocking LISTEN loop for a thread of its own: the wake-up half of the "table plus LISTEN/NOTIFY"
/// pattern the webhook dispatcher and the warm-up worker share. The table is the truth; a notification
/// only says "look now", so a lost one costs at most a poll interval.

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::pg {

/// What a LISTEN loop reports, all on its own thread.
struct listen_events
{
    /// After every (re)connect, once LISTEN is in effect (notifications sent while not listening are lost).
    std::function<void()> connected;
    /// One batch of notifications, by payload, in the order sent.
    std::function<void(const std::vector<std::string>& payloads)> notified;
    /// The connection was lost (or could not LISTEN); a reconnect follows unless stopping.
    std::function<void()> disconnected;
};

/// Keeps a dedicated libpq connection LISTENing on `channel` until `stopping` is set, reporting to `events`.
/// A failed connection is retried every 2 s, logged with `what`; TCP keepalives notice a dead server within
/// about 20 s. Checks `stopping` at least every 200 ms. `application_name` names the session in
/// pg_stat_activity.
void listen_until(const std::string& database_url, std::string_view channel,
                  std::string_view application_name, std::string_view what, const std::atomic<bool>& stopping,
                  const listen_events& events);

/// Keeps a dedicated libpq connection LISTENing on `channel` until `stopping` is set, calling `wake` once
/// per batch of notifications and once after every (re)connect (notifications sent while not listening
/// are lost). A failed connection is retried every 2 s, logged with `what`. Checks `stopping` at least
/// every 200 ms. `application_name` names the session in pg_stat_activity.
void listen_until(const std::string& database_url, std::string_view channel,
                  std::string_view application_name, std::string_view what, const std::atomic<bool>& stopping,
                  const std::function<void()>& wake);

} // namespace depot::pg
