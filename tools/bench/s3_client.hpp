#pragma once
/// \file
/// depot-bench's HTTP/1.1 client: one keep-alive connection per benchmark client, SigV4-signed requests
/// (Authorization header, UNSIGNED-PAYLOAD), bodies generated on the fly in 256 KiB chunks and response
/// bodies read into a fixed buffer and discarded, so memory stays bounded whatever the object size.
/// Beast is used only inside s3_client.cpp.

#include "s3_util.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace depot::bench {

namespace asio = boost::asio;

/// One request. Views must stay valid until `send` completes.
struct request
{
    std::string_view method;
    std::string target; ///< path and query, already percent-encoded: "/bucket/key?uploadId=x"
    std::vector<std::pair<std::string, std::string>> headers; ///< sent, not signed (e.g. range)
    std::uint64_t body_size = 0;                              ///< generated body length (with `body`)
    const content_generator* body = nullptr;                  ///< generates the body when set
    std::uint64_t object_id = 0;                              ///< for `body`
    std::uint64_t body_offset = 0; ///< for `body`: offset of the first byte within the object
    std::string_view body_text;    ///< a literal body (when `body` is null)
    bool has_body = false;         ///< send Content-Length (PUT/POST), even 0
    bool head = false;             ///< HEAD: the response has no body
    bool capture_body = false;     ///< keep the response body (XML), up to 16 MiB
};

struct response
{
    unsigned status = 0;
    std::uint64_t body_bytes = 0;
    std::chrono::nanoseconds ttfb{0};  ///< request start to response header parsed
    std::chrono::nanoseconds total{0}; ///< request start to last body byte
    std::string body;                  ///< when captured, and for error statuses (first 64 KiB)
    std::string etag;
};

/// A keep-alive connection to one endpoint. Not thread-safe; one request at a time.
class connection
{
public:
    connection(asio::any_io_executor ex, const options& opts);
    ~connection();
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    /// Sends a signed request and reads the whole response; connects (again) when needed.
    /// Throws std::system_error on network errors and timeouts (the connection is closed then and the
    /// next request reconnects). Any HTTP status is a normal result.
    asio::awaitable<response> send(const request& req);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

} // namespace depot::bench
