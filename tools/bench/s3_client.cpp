#include "s3_client.hpp"

#include "auth/sigv4.hpp"
#include "common/transfer_whole.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <limits>
#include <system_error>

namespace depot::bench {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t chunk_size = 256 * 1024;
constexpr std::size_t max_captured = 16 * 1024 * 1024;
constexpr std::size_t max_error_body = 64 * 1024;

[[noreturn]] void fail(const boost::system::error_code& ec, const char* what)
{
    throw std::system_error(ec, what);
}

} // namespace

struct connection::impl
{
    impl(asio::any_io_executor ex, const options& o)
        : opts(o), stream(ex), host_header(o.port == "80" ? o.host : o.host + ':' + o.port),
          send_buffer(chunk_size), recv_buffer(chunk_size)
    {}

    const options& opts;
    beast::tcp_stream stream;
    beast::flat_buffer read_buffer;
    std::string host_header;
    std::vector<char> send_buffer;
    std::vector<char> recv_buffer;
    bool connected = false;

    asio::awaitable<void> connect()
    {
        tcp::resolver resolver(stream.get_executor());
        stream.expires_after(opts.timeout);
        auto [rec, results] = co_await resolver.async_resolve(opts.host, opts.port, use_tuple);
        if (rec)
            fail(rec, "resolve");
        auto [cec, ep] = co_await stream.async_connect(results, use_tuple);
        if (cec)
            fail(cec, "connect");
        stream.socket().set_option(tcp::no_delay(true));
        read_buffer.clear();
        connected = true;
    }

    void close()
    {
        boost::system::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
        stream.socket().close(ignored);
        connected = false;
    }

    std::string head_of(const request& req) const
    {
        const auth::header_view signed_headers[] = {{"host", host_header}};
        auth::sign_options sign{.access_key_id = opts.access_key,
                                .secret = opts.secret_key,
                                .region = opts.region,
                                .now = std::chrono::system_clock::now()};
        auto added = auth::sign_headers(req.method, req.target, signed_headers, sign);
        std::string head;
        head.reserve(512);
        head.append(req.method).append(" ").append(req.target).append(" HTTP/1.1\r\nhost: ");
        head.append(host_header).append("\r\n");
        for (const auto& [name, value] : added)
            head.append(name).append(": ").append(value).append("\r\n");
        for (const auto& [name, value] : req.headers)
            head.append(name).append(": ").append(value).append("\r\n");
        if (req.has_body) {
            auto length = req.body ? req.body_size : req.body_text.size();
            head.append("content-length: ").append(std::to_string(length)).append("\r\n");
        }
        head.append("\r\n");
        return head;
    }

    asio::awaitable<void> write_all(const char* data, std::size_t size)
    {
        auto buffer = asio::buffer(data, size);
        stream.expires_after(opts.timeout);
        auto [ec, n] = co_await asio::async_write(stream, buffer, transfer_whole{size}, use_tuple);
        if (ec)
            fail(ec, "write");
    }

    asio::awaitable<response> exchange(const request& req)
    {
        response resp;
        auto start = clock_type::now();
        auto head = head_of(req);
        if (req.body) {
            // The head and the first chunk go out in one write: one segment for small objects.
            std::uint64_t sent = 0;
            auto first = static_cast<std::size_t>(std::min<std::uint64_t>(req.body_size, chunk_size));
            head.resize(head.size() + first);
            req.body->fill(req.object_id, req.body_offset,
                           std::span<char>(head.data() + head.size() - first, first));
            co_await write_all(head.data(), head.size());
            sent = first;
            while (sent < req.body_size) {
                auto n = static_cast<std::size_t>(std::min<std::uint64_t>(req.body_size - sent, chunk_size));
                req.body->fill(req.object_id, req.body_offset + sent, std::span<char>(send_buffer.data(), n));
                co_await write_all(send_buffer.data(), n);
                sent += n;
            }
        } else {
            head.append(req.body_text);
            co_await write_all(head.data(), head.size());
        }

        http::response_parser<http::buffer_body> parser;
        parser.body_limit(std::numeric_limits<std::uint64_t>::max());
        if (req.head)
            parser.skip(true);
        stream.expires_after(opts.timeout);
        auto [hec, hn] = co_await http::async_read_header(stream, read_buffer, parser, use_tuple);
        if (hec)
            fail(hec, "read header");
        resp.ttfb = clock_type::now() - start;
        resp.status = parser.get().result_int();
        if (auto it = parser.get().find(http::field::etag); it != parser.get().end())
            resp.etag = std::string(it->value());
        bool keep = req.capture_body || resp.status >= 300;
        std::size_t keep_limit = req.capture_body ? max_captured : max_error_body;
        auto take = [&](const char* data, std::size_t got) {
            resp.body_bytes += got;
            if (keep && resp.body.size() < keep_limit)
                resp.body.append(data, std::min(got, keep_limit - resp.body.size()));
        };
        if (!parser.is_done() && parser.content_length() && !parser.chunked()) {
            // A body of known length is read straight from the socket into recv_buffer: one copy and reads
            // as large as the buffer, instead of 64 KiB reads into read_buffer that the parser then copies.
            // Otherwise the client, not the server, is what a large-object GET measures.
            std::uint64_t left = *parser.content_length();
            auto early = static_cast<std::size_t>(std::min<std::uint64_t>(left, read_buffer.size()));
            take(static_cast<const char*>(read_buffer.data().data()), early);
            read_buffer.consume(early);
            left -= early;
            while (left > 0) {
                auto want = static_cast<std::size_t>(std::min<std::uint64_t>(left, recv_buffer.size()));
                stream.expires_after(opts.timeout);
                auto [ec, got] =
                    co_await stream.async_read_some(asio::buffer(recv_buffer.data(), want), use_tuple);
                if (ec)
                    fail(ec, "read body");
                take(recv_buffer.data(), got);
                left -= got;
            }
        } else {
            while (!parser.is_done()) {
                parser.get().body().data = recv_buffer.data();
                parser.get().body().size = recv_buffer.size();
                stream.expires_after(opts.timeout);
                auto [ec, n] = co_await http::async_read(stream, read_buffer, parser, use_tuple);
                if (ec == http::error::need_buffer)
                    ec = {};
                if (ec)
                    fail(ec, "read body");
                take(recv_buffer.data(), recv_buffer.size() - parser.get().body().size);
            }
        }
        if (!parser.keep_alive())
            close();
        resp.total = clock_type::now() - start;
        co_return resp;
    }
};

connection::connection(asio::any_io_executor ex, const options& opts)
    : impl_(std::make_unique<impl>(ex, opts))
{}

connection::~connection() = default;

asio::awaitable<response> connection::send(const request& req)
{
    auto& s = *impl_;
    try {
        if (!s.connected)
            co_await s.connect();
        co_return co_await s.exchange(req);
    } catch (...) {
        s.close();
        throw;
    }
}

} // namespace depot::bench
