#include "registry/pg/listener.hpp"

#include "common/log.hpp"

#include <cerrno>
#include <chrono>
#include <libpq-fe.h>
#include <poll.h>
#include <thread>

namespace depot::pg {

void listen_until(const std::string& database_url, std::string_view channel,
                  std::string_view application_name, std::string_view what, const std::atomic<bool>& stopping,
                  const std::function<void()>& wake)
{
    listen_until(database_url, channel, application_name, what, stopping,
                 listen_events{.connected = wake,
                               .notified = [&wake](const std::vector<std::string>&) { wake(); },
                               .disconnected = {}});
}

void listen_until(const std::string& database_url, std::string_view channel,
                  std::string_view application_name, std::string_view what, const std::atomic<bool>& stopping,
                  const listen_events& events)
{
    const std::string app(application_name);
    // The channel is one of depotd's own identifiers, never user input.
    const std::string listen = "LISTEN " + std::string(channel);
    while (!stopping) {
        // The URL expands into its parameters; the ones after it bound the connect and name the session.
        // Keepalives: a server that vanished without closing the connection (a dead host, a partition) is
        // noticed in about 5 + 3 x 5 s, not after the kernel's two hours.
        const char* const keywords[] = {
            "dbname",          "connect_timeout",     "application_name", "keepalives",
            "keepalives_idle", "keepalives_interval", "keepalives_count", nullptr};
        const char* const values[] = {database_url.c_str(), "5", app.c_str(), "1", "5", "5", "3", nullptr};
        PGconn* conn = PQconnectdbParams(keywords, values, 1);
        bool listening = false;
        if (PQstatus(conn) == CONNECTION_OK) {
            PGresult* r = PQexec(conn, listen.c_str());
            listening = PQresultStatus(r) == PGRES_COMMAND_OK;
            PQclear(r);
        }
        if (!listening) {
            if (events.disconnected)
                events.disconnected();
            log::warn(std::string(what) + ": cannot LISTEN; retrying in 2 s",
                      {{"channel", std::string(channel)}, {"error", std::string(PQerrorMessage(conn))}});
            PQfinish(conn);
            for (int i = 0; i < 20 && !stopping; ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            continue;
        }
        if (events.connected)
            events.connected(); // whatever was committed while not listening
        std::vector<std::string> payloads;
        while (!stopping) {
            pollfd p{.fd = PQsocket(conn), .events = POLLIN, .revents = 0};
            const int n = ::poll(&p, 1, 200);
            if (n < 0 && errno != EINTR)
                break;
            if (n <= 0)
                continue;
            if (!PQconsumeInput(conn))
                break;
            payloads.clear();
            while (PGnotify* note = PQnotifies(conn)) {
                payloads.emplace_back(note->extra ? note->extra : "");
                PQfreemem(note);
            }
            if (!payloads.empty() && events.notified)
                events.notified(payloads);
        }
        if (events.disconnected)
            events.disconnected();
        if (!stopping)
            log::warn(std::string(what) + ": LISTEN connection lost; reconnecting",
                      {{"channel", std::string(channel)}, {"error", std::string(PQerrorMessage(conn))}});
        PQfinish(conn);
    }
}

} // namespace depot::pg
