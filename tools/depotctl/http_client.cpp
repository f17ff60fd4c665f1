#include "http_client.hpp"

#include "auth/sigv4.hpp"
#include "common/hash.hpp"

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <cctype>
#include <fstream>
#include <limits>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/time.h>

namespace depot::ctl {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t chunk_size = 256 * 1024;
constexpr std::size_t max_kept_body = 64 * 1024 * 1024;

std::string lower(std::string_view s)
{
    std::string out(s);
    for (auto& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return std::string(s);
}

/// A failure before any response byte arrived: the request may be sent again on a new connection.
struct not_answered : transport_error
{
    using transport_error::transport_error;
};

} // namespace

std::string endpoint::host_header() const
{
    if ((tls && port == "443") || (!tls && port == "80"))
        return host;
    return host + ":" + port;
}

void parse_endpoint_url(const std::string& url, endpoint& out)
{
    std::string_view rest = url;
    if (rest.rfind("https://", 0) == 0) {
        out.tls = true;
        rest.remove_prefix(8);
    } else if (rest.rfind("http://", 0) == 0) {
        out.tls = false;
        rest.remove_prefix(7);
    } else {
        throw std::invalid_argument("endpoint '" + url + "' must start with http:// or https://");
    }
    while (!rest.empty() && rest.back() == '/')
        rest.remove_suffix(1);
    if (rest.empty() || rest.find('/') != std::string_view::npos)
        throw std::invalid_argument("endpoint '" + url + "' must be scheme://host[:port] without a path");
    std::string_view host = rest;
    std::string port = out.tls ? "443" : "80";
    if (rest.front() == '[') { // [::1]:9000
        auto close = rest.find(']');
        if (close == std::string_view::npos)
            throw std::invalid_argument("endpoint '" + url + "': unterminated IPv6 address");
        host = rest.substr(1, close - 1);
        if (close + 1 < rest.size()) {
            if (rest[close + 1] != ':')
                throw std::invalid_argument("endpoint '" + url + "': bad port");
            port = std::string(rest.substr(close + 2));
        }
    } else if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
        host = rest.substr(0, colon);
        port = std::string(rest.substr(colon + 1));
    }
    if (host.empty() || port.empty() ||
        !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
        throw std::invalid_argument("endpoint '" + url + "': bad host or port");
    out.host = std::string(host);
    out.port = port;
}

bool read_credentials_profile(const std::filesystem::path& file, const std::string& profile, endpoint& out)
{
    std::ifstream in(file);
    if (!in)
        return false;
    std::string line;
    bool inside = false;
    bool found = false;
    while (std::getline(in, line)) {
        auto t = trim(line);
        if (t.empty() || t.front() == '#' || t.front() == ';')
            continue;
        if (t.front() == '[') {
            inside = t == "[" + profile + "]";
            found = found || inside;
            continue;
        }
        if (!inside)
            continue;
        auto eq = t.find('=');
        if (eq == std::string::npos)
            continue;
        auto name = trim(std::string_view(t).substr(0, eq));
        auto value = trim(std::string_view(t).substr(eq + 1));
        if (name == "aws_access_key_id")
            out.access_key = value;
        else if (name == "aws_secret_access_key")
            out.secret = value;
    }
    return found;
}

struct http_connection::impl
{
    explicit impl(const endpoint& e) : ep(e) {}

    const endpoint& ep;
    asio::io_context ioc;
    std::optional<asio::ssl::context> ssl_ctx;
    std::optional<tcp::socket> plain;
    std::optional<asio::ssl::stream<tcp::socket>> secure;
    beast::flat_buffer buffer;
    std::vector<char> chunk = std::vector<char>(chunk_size);
    bool connected = false;

    tcp::socket& socket() { return secure ? secure->next_layer() : *plain; }

    template <class F>
    void with_stream(F&& f)
    {
        if (secure)
            f(*secure);
        else
            f(*plain);
    }

    void close()
    {
        if (!plain && !secure)
            return;
        boost::system::error_code ignored;
        socket().shutdown(tcp::socket::shutdown_both, ignored);
        socket().close(ignored);
        secure.reset();
        plain.reset();
        buffer.clear();
        connected = false;
    }

    void set_timeouts(tcp::socket& s)
    {
        timeval tv{};
        tv.tv_sec = static_cast<time_t>(ep.timeout.count());
        ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        ::setsockopt(s.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        s.set_option(tcp::no_delay(true));
    }

    void connect()
    {
        close();
        boost::system::error_code ec;
        tcp::resolver resolver(ioc);
        auto results = resolver.resolve(ep.host, ep.port, ec);
        if (ec)
            throw transport_error("cannot resolve " + ep.host + ": " + ec.message());
        if (ep.tls) {
            if (!ssl_ctx) {
                ssl_ctx.emplace(asio::ssl::context::tls_client);
                ssl_ctx->set_verify_mode(asio::ssl::verify_peer);
                if (!ep.ca_file.empty())
                    ssl_ctx->load_verify_file(ep.ca_file, ec);
                else
                    ssl_ctx->set_default_verify_paths(ec);
                if (ec)
                    throw transport_error("cannot load the trusted certificates: " + ec.message());
            }
            secure.emplace(ioc, *ssl_ctx);
            asio::connect(secure->next_layer(), results, ec);
            if (ec)
                throw transport_error("cannot connect to " + ep.host_header() + ": " + ec.message());
            set_timeouts(secure->next_layer());
            SSL_set_tlsext_host_name(secure->native_handle(), ep.host.c_str());
            secure->set_verify_callback(asio::ssl::host_name_verification(ep.host));
            secure->handshake(asio::ssl::stream_base::client, ec);
            if (ec)
                throw transport_error("TLS handshake with " + ep.host_header() + " failed: " + ec.message());
        } else {
            plain.emplace(ioc);
            asio::connect(*plain, results, ec);
            if (ec)
                throw transport_error("cannot connect to " + ep.host_header() + ": " + ec.message());
            set_timeouts(*plain);
        }
        connected = true;
    }

    std::string head_of(const http_request& req, std::uint64_t length)
    {
        std::vector<std::pair<std::string, std::string>> headers;
        headers.reserve(req.headers.size() + 4);
        headers.emplace_back("host", ep.host_header());
        for (const auto& [name, value] : req.headers)
            headers.emplace_back(lower(name), value);
        if (ep.can_sign()) {
            std::string payload = req.payload_sha256;
            if (payload.empty())
                payload = req.file ? "UNSIGNED-PAYLOAD" : to_hex(sha256(req.body));
            std::vector<auth::header_view> to_sign;
            for (const auto& [name, value] : headers)
                if (name == "host" || name.rfind("x-amz-", 0) == 0 || name == "content-md5" ||
                    name == "content-type")
                    to_sign.push_back({name, value});
            auth::sign_options options{.access_key_id = ep.access_key,
                                       .secret = ep.secret,
                                       .region = ep.region,
                                       .now = std::chrono::system_clock::now(),
                                       .payload_hash = payload};
            for (auto& h : auth::sign_headers(req.method, req.target, to_sign, options))
                headers.push_back(std::move(h));
        } else if (!ep.token.empty()) {
            headers.emplace_back("authorization", "Bearer " + ep.token);
        }
        std::string head = req.method + " " + req.target + " HTTP/1.1\r\n";
        for (const auto& [name, value] : headers)
            head.append(name).append(": ").append(value).append("\r\n");
        if (length > 0 || req.method == "PUT" || req.method == "POST" || req.method == "PATCH")
            head.append("content-length: ").append(std::to_string(length)).append("\r\n");
        head.append("\r\n");
        return head;
    }

    template <class Stream>
    void write_all(Stream& s, const char* data, std::size_t size)
    {
        boost::system::error_code ec;
        asio::write(s, asio::buffer(data, size), ec);
        if (ec)
            throw not_answered("sending to " + ep.host_header() + " failed: " + ec.message());
    }

    /// One request/response exchange on the open connection.
    http_response exchange(const http_request& req, std::uint64_t& sent, std::uint64_t& received)
    {
        std::uint64_t length = req.file ? req.file->length : req.body.size();
        auto head = head_of(req, length);
        with_stream([&](auto& s) {
            if (!req.file) {
                head += req.body;
                write_all(s, head.data(), head.size());
                sent += req.body.size();
                return;
            }
            write_all(s, head.data(), head.size());
            std::ifstream in(req.file->path, std::ios::binary);
            if (!in)
                throw std::runtime_error("cannot read " + req.file->path.string());
            in.seekg(static_cast<std::streamoff>(req.file->offset));
            std::uint64_t left = req.file->length;
            while (left > 0) {
                auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk.size()));
                if (!in.read(chunk.data(), static_cast<std::streamsize>(n)))
                    throw std::runtime_error(req.file->path.string() + " changed while being sent");
                write_all(s, chunk.data(), n);
                left -= n;
                sent += n;
            }
        });

        http_response resp;
        http::response_parser<http::buffer_body> parser;
        parser.body_limit(std::numeric_limits<std::uint64_t>::max());
        if (req.method == "HEAD")
            parser.skip(true);
        with_stream([&](auto& s) {
            boost::system::error_code ec;
            http::read_header(s, buffer, parser, ec);
            if (ec)
                throw not_answered("no answer from " + ep.host_header() + ": " + ec.message());
            resp.status = parser.get().result_int();
            for (const auto& f : parser.get())
                resp.headers[lower(f.name_string())] = std::string(f.value());
            const bool to_sink = req.sink && resp.status / 100 == 2;
            while (!parser.is_done()) {
                parser.get().body().data = chunk.data();
                parser.get().body().size = chunk.size();
                http::read(s, buffer, parser, ec);
                if (ec == http::error::need_buffer)
                    ec = {};
                if (ec)
                    throw transport_error("reading the response from " + ep.host_header() +
                                          " failed: " + ec.message());
                std::size_t got = chunk.size() - parser.get().body().size;
                received += got;
                if (to_sink)
                    req.sink(std::string_view(chunk.data(), got));
                else if (resp.body.size() < max_kept_body)
                    resp.body.append(chunk.data(), std::min(got, max_kept_body - resp.body.size()));
            }
        });
        if (!parser.keep_alive())
            close();
        return resp;
    }
};

http_connection::http_connection(const endpoint& ep) : impl_(std::make_unique<impl>(ep)) {}

http_connection::~http_connection()
{
    impl_->close();
}

http_response http_connection::send(const http_request& req)
{
    auto& s = *impl_;
    for (int attempt = 0;; ++attempt) {
        const bool reused = s.connected;
        try {
            if (!s.connected)
                s.connect();
            return s.exchange(req, bytes_sent_, bytes_received_);
        } catch (const not_answered&) {
            s.close();
            if (!reused || attempt > 0)
                throw;
        } catch (...) {
            s.close();
            throw;
        }
    }
}

} // namespace depot::ctl
