#pragma once
/// \file
/// depotctl's HTTP/1.1 client for a running depotd: blocking, one keep-alive connection per object (one per
/// transfer thread), plain TCP or TLS, requests signed with SigV4 (an S3 access key) or carrying an API
/// token. Bodies are strings or byte ranges of files, streamed from disk; response bodies are kept or
/// handed to a sink chunk by chunk, so memory stays bounded whatever the file size.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace depot::ctl {

/// Where depotd is and who we are. `from_environment` fills it from flags and the usual variables.
struct endpoint
{
    bool tls = false;
    std::string host = "127.0.0.1";
    std::string port = "9000";
    std::string region = "us-east-1";
    std::string access_key; ///< S3 access key id (SigV4); preferred when set
    std::string secret;
    std::string token;   ///< API token (REST only) when there is no access key
    std::string ca_file; ///< PEM bundle to trust instead of the system's (https)
    std::chrono::seconds timeout{120};

    std::string host_header() const;
    bool can_sign() const { return !access_key.empty() && !secret.empty(); }
};

/// Parses "http://host:port" or "https://host[:port]"; throws std::invalid_argument otherwise.
void parse_endpoint_url(const std::string& url, endpoint& out);

/// Reads `profile` from an AWS shared-credentials file; false when the file or profile is missing.
bool read_credentials_profile(const std::filesystem::path& file, const std::string& profile, endpoint& out);

/// A byte range of a local file sent as the request body.
struct file_range
{
    std::filesystem::path path;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

struct http_request
{
    std::string method = "GET";
    std::string target; ///< path and query, percent-encoded as sent
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;               ///< used when `file` is not set
    std::optional<file_range> file; ///< streamed body
    std::string payload_sha256;     ///< hex SHA-256 of the body to sign; empty: computed for `body`,
                                    ///< UNSIGNED-PAYLOAD for `file`
    /// Receives a 2xx response body chunk by chunk instead of `http_response::body`.
    std::function<void(std::string_view)> sink;
};

struct http_response
{
    unsigned status = 0;
    std::map<std::string, std::string> headers; ///< lower-case names
    std::string body;                           ///< unless streamed to the sink (error bodies always here)

    std::string header(const std::string& name) const
    {
        auto it = headers.find(name);
        return it == headers.end() ? std::string() : it->second;
    }
};

/// A network failure (connect, TLS, timeout, reset); HTTP error statuses are normal responses.
struct transport_error : std::runtime_error
{
    using std::runtime_error::runtime_error;
};

class http_connection
{
public:
    explicit http_connection(const endpoint& ep);
    ~http_connection();
    http_connection(const http_connection&) = delete;
    http_connection& operator=(const http_connection&) = delete;

    /// Sends the request and reads the whole response, (re)connecting as needed. A request that fails on
    /// a kept-alive connection before any response byte arrived is sent once more on a new connection.
    http_response send(const http_request& req);

    /// Request and response body bytes this connection moved (payload only, not headers).
    std::uint64_t bytes_sent() const { return bytes_sent_; }
    std::uint64_t bytes_received() const { return bytes_received_; }

private:
    struct impl;
    std::unique_ptr<impl> impl_;
    std::uint64_t bytes_sent_ = 0;
    std::uint64_t bytes_received_ = 0;
};

} // namespace depot::ctl
