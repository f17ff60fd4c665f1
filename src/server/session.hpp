#pragma once
/// \file
/// One HTTP/1.1 connection: a coroutine on the connection's strand that reads a request header, hands the
/// request to `dispatch`, streams the response, and loops while the connection is kept alive.

#include "server/context.hpp"

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <functional>
#include <mutex>
#include <unordered_set>

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

private:
    mutable std::mutex mutex_;
    std::unordered_set<entry*> live_;
    std::atomic<bool> stopping_{false};
};

/// Serves one accepted connection until the peer closes, a timeout fires, or the server stops.
asio::awaitable<void> run_session(beast::tcp_stream stream, services& svc, connection_registry& registry);

/// Authenticates, routes and runs one request. Request-level failures and infrastructure exceptions both
/// come back as error responses (S3 XML or problem+json) with the request id; it never throws.
asio::awaitable<response> dispatch(request_context& ctx);

} // namespace depot::server
