#pragma once
/// \file
/// One HTTP/1.1 connection: a coroutine on the connection's strand that reads a request header, hands the
/// request to `dispatch`, streams the response, and loops while the connection is kept alive. The same
/// session code serves plain TCP and TLS connections (it is a template over the stream type, instantiated
/// for both in session.cpp only), so plain HTTP pays nothing for TLS support.

#include "server/context.hpp"

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_set>

namespace boost::asio::ssl {
class context;
} // namespace boost::asio::ssl

namespace depot::server {

namespace asio = boost::asio;
namespace beast = boost::beast;

/// Tracks live connections so shutdown can close the idle ones and wait for the busy ones. Thread-safe.
class connection_registry
{
public:
    struct entry
    {
        /// Posts to the connection's strand: closes the socket if the connection is idle, or always if
        /// forced.
        std::function<void(bool force)> close;
    };
    void add(entry* e);
    void remove(entry* e);
    /// Marks the server as stopping and closes every idle connection.
    void begin_shutdown();
    /// Closes every connection, busy or not (after the grace period).
    void close_all();
    bool stopping() const noexcept { return stopping_.load(); }
    std::size_t size() const;

    /// Counts a newly accepted connection, unless `limit` connections are already open (then it returns
    /// false and the caller closes the connection). Called by the acceptor, before the session starts, so
    /// that connections accepted in a burst are counted before any of them registers.
    bool try_open(std::size_t limit) noexcept;
    /// Uncounts a connection counted by `try_open`, once its session has ended.
    void closed() noexcept { open_.fetch_sub(1); }
    std::size_t open() const noexcept { return open_.load(); }

private:
    mutable std::mutex mutex_;
    std::unordered_set<entry*> live_;
    std::atomic<bool> stopping_{false};
    std::atomic<std::size_t> open_{0};
};

/// Serves one accepted plain-HTTP connection until the peer closes, a timeout fires, or the server stops.
/// `listener` is the listener that accepted it (every request_context of the connection carries it).
asio::awaitable<void> run_session(beast::tcp_stream stream, services& svc, connection_registry& registry,
                                  listener_kind listener);

/// Serves one accepted connection on a TLS listener: handshakes with `tls` (which the session keeps alive
/// for its whole life, whatever a reload does meanwhile), then serves HTTP/1.1 as `run_session` does, and
/// ends with a TLS close_notify exchange bounded by a timeout. A client that speaks plain HTTP to this port
/// gets a plain-HTTP 400 saying so, and the connection is closed.
asio::awaitable<void> run_tls_session(beast::tcp_stream stream, std::shared_ptr<asio::ssl::context> tls,
                                      services& svc, connection_registry& registry, listener_kind listener);

/// Authenticates, routes and runs one request. Request-level failures and infrastructure exceptions both
/// come back as error responses (S3 XML or problem+json) with the request id; it never throws.
asio::awaitable<response> dispatch(request_context& ctx);

} // namespace depot::server
