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
    const std::string app(application_name);
    // The channel is one of depotd's own identifiers, never user input.
    const std::string listen = "LISTEN " + std::string(channel);
    while (!stopping) {
        // The URL expands into its parameters; the ones after it bound the connect and name the session.
        const char* const keywords[] = {"dbname", "connect_timeout", "application_name", nullptr};
        const char* const values[] = {database_url.c_str(), "5", app.c_str(), nullptr};
        PGconn* conn = PQconnectdbParams(keywords, values, 1);
        bool listening = false;
        if (PQstatus(conn) == CONNECTION_OK) {
            PGresult* r = PQexec(conn, listen.c_str());
            listening = PQresultStatus(r) == PGRES_COMMAND_OK;
            PQclear(r);
        }
        if (!listening) {
            log::warn(std::string(what) + ": cannot LISTEN; polling only until it works",
                      {{"channel", std::string(channel)}, {"error", std::string(PQerrorMessage(conn))}});
            PQfinish(conn);
            for (int i = 0; i < 20 && !stopping; ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            continue;
        }
        wake(); // whatever was committed while not listening
        while (!stopping) {
            pollfd p{.fd = PQsocket(conn), .events = POLLIN, .revents = 0};
            const int n = ::poll(&p, 1, 200);
            if (n < 0 && errno != EINTR)
                break;
            if (n <= 0)
                continue;
            if (!PQconsumeInput(conn))
                break;
            bool notified = false;
            while (PGnotify* note = PQnotifies(conn)) {
                notified = true;
                PQfreemem(note);
            }
            if (notified)
                wake();
        }
        PQfinish(conn);
    }
}

} // namespace depot::pg
