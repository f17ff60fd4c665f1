#include "server/session.hpp"

#include "common/hash.hpp"
#include "common/http_date.hpp"
#include "common/log.hpp"
#include "common/transfer_whole.hpp"
#include "s3/errors.hpp"
#include "s3/header_values.hpp"
#include "server/services.hpp"

#include <atomic>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/detect_ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <chrono>
#include <cstdio>
#include <optional>
#include <type_traits>

namespace depot::server {
namespace {

using parser_t = http::request_parser<http::buffer_body>;
using tls_stream = beast::ssl_stream<beast::tcp_stream>;
constexpr std::size_t stream_chunk = 1 << 20;
/// Upper bounds of the TLS handshake and of the close_notify exchange at the end of a TLS connection.
constexpr std::chrono::seconds handshake_timeout{30};
constexpr std::chrono::seconds tls_shutdown_timeout{5};
/// After an error answer that closes the connection, how long (and how much) the client's unread bytes are
/// read and discarded first, so that closing with unread data (which sends a TCP RST) cannot destroy the
/// answer before the client has read it.
constexpr std::chrono::seconds linger_timeout{2};
constexpr std::size_t linger_bytes = 1 << 20;

/// The TCP layer under a stream: timeouts and the socket live there.
template <class Stream>
beast::tcp_stream& tcp_of(Stream& stream)
{
    return beast::get_lowest_layer(stream);
}

std::string new_request_id()
{
    static std::atomic<std::uint64_t> counter{0};
    static const std::string prefix = to_hex(random_bytes(4));
    char buf[24];
    std::snprintf(buf, sizeof buf, "%012llx",
                  static_cast<unsigned long long>(counter.fetch_add(1, std::memory_order_relaxed)));
    return prefix + buf;
}

std::string http_date_now()
{
    return format_http_date(std::chrono::system_clock::now());
}

/// The request body, pulled on demand. Sends "100 Continue" before the first read when the client asked
/// for it, so a request refused before its body is read never makes the client send it.
///
/// A body of declared length (Content-Length, what every S3 upload but a chunked one sends) bypasses the
/// parser: bytes the header read already buffered are handed out first, then the socket is read straight
/// into the caller's buffer, as much as the socket has up to what the caller asked for. Through the parser
/// each read would stop at its 64 KiB read size and be copied once more; a profile of large PUTs spent most
/// of depotd's CPU in that per-read overhead. Only chunked transfer encoding still goes through the parser.
template <class Stream>
class body_source final : public depot::byte_source
{
public:
    body_source(Stream& stream, beast::flat_buffer& buffer, parser_t& parser, bool expect_continue,
                std::chrono::seconds timeout)
        : stream_(stream), buffer_(buffer), parser_(parser), expect_continue_(expect_continue),
          timeout_(timeout)
    {
        if (!parser_.chunked() && !parser_.is_done()) {
            if (auto len = parser_.content_length()) {
                direct_ = true;
                remaining_ = *len;
            }
        }
    }

    asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override
    {
        if (buf.empty())
            co_return std::size_t{0};
        if (expect_continue_ && !done())
            if (!co_await send_continue())
                co_return make_error(errc::incomplete_body, "connection lost before the body was sent");
        expect_continue_ = false;
        if (direct_) {
            auto n = co_await read_direct(buf);
            co_return n;
        }
        while (!parser_.is_done()) {
            parser_.get().body().data = buf.data();
            parser_.get().body().size = buf.size();
            tcp_of(stream_).expires_after(timeout_);
            boost::system::error_code ec;
            co_await http::async_read_some(stream_, buffer_, parser_,
                                           asio::redirect_error(asio::use_awaitable, ec));
            if (ec && ec != http::error::need_buffer) {
                failed_ = true;
                co_return make_error(errc::incomplete_body,
                                     "The request body ended before its declared length (" + ec.message() +
                                         ")");
            }
            std::size_t n = buf.size() - parser_.get().body().size;
            if (n > 0)
                co_return n;
        }
        co_return std::size_t{0};
    }

    /// Writes "100 Continue" (once); false when the connection is lost.
    asio::awaitable<bool> send_continue()
    {
        expect_continue_ = false;
        http::response<http::empty_body> cont{http::status::continue_, 11};
        tcp_of(stream_).expires_after(timeout_);
        boost::system::error_code ec;
        co_await http::async_write(stream_, cont, asio::redirect_error(asio::use_awaitable, ec));
        co_return !ec;
    }

    /// Whether the whole body has been read.
    bool done() const noexcept { return direct_ ? remaining_ == 0 : parser_.is_done(); }
    /// Body bytes still unread, when the body has a declared length.
    std::optional<std::uint64_t> remaining() const
    {
        if (direct_)
            return remaining_;
        if (auto left = parser_.content_length_remaining())
            return *left;
        return std::nullopt;
    }
    bool failed() const noexcept { return failed_; }
    bool continue_pending() const noexcept { return expect_continue_; }

private:
    asio::awaitable<result<std::size_t>> read_direct(std::span<std::byte> buf)
    {
        if (remaining_ == 0)
            co_return std::size_t{0};
        const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), remaining_));
        std::size_t n = 0;
        if (buffer_.size() > 0) {
            // Never past the body: what follows belongs to the next request on this connection.
            n = asio::buffer_copy(asio::buffer(buf.data(), want), buffer_.data());
            buffer_.consume(n);
        } else {
            tcp_of(stream_).expires_after(timeout_);
            boost::system::error_code ec;
            n = co_await stream_.async_read_some(asio::buffer(buf.data(), want),
                                                 asio::redirect_error(asio::use_awaitable, ec));
            if (ec || n == 0) {
                failed_ = true;
                co_return make_error(errc::incomplete_body,
                                     "The request body ended before its declared length (" +
                                         (ec ? ec.message() : std::string("end of stream")) + ")");
            }
        }
        remaining_ -= n;
        co_return n;
    }

    Stream& stream_;
    beast::flat_buffer& buffer_;
    parser_t& parser_;
    bool expect_continue_;
    std::chrono::seconds timeout_;
    bool failed_ = false;
    bool direct_ = false;         ///< a body of declared length, read past the parser
    std::uint64_t remaining_ = 0; ///< of a direct body
};

/// Drains what is left of a small unread body so the connection can be reused; false = close instead.
template <class Stream>
asio::awaitable<bool> drain_body(body_source<Stream>& body)
{
    if (body.done())
        co_return true;
    // The client is still waiting for "100 Continue": it may or may not send the body now, so the stream
    // position is unknowable. Close.
    if (body.continue_pending())
        co_return false;
    auto remaining = body.remaining();
    if (!remaining || *remaining > (1u << 20))
        co_return false;
    std::vector<std::byte> sink(64 * 1024);
    for (;;) {
        auto n = co_await body.read_some(sink);
        if (!n)
            co_return false;
        if (*n == 0)
            co_return true;
    }
}

template <class Stream>
asio::awaitable<bool> write_response(Stream& stream, response& res, bool keep_alive, unsigned version,
                                     const config::options& opts)
{
    boost::system::error_code ec;
    auto set_common = [&](auto& msg) {
        for (const auto& f : res.headers) {
            // Last line of defence: values are validated where they enter (s3/header_values.hpp); one that
            // slipped through is dropped rather than allowed to split the response.
            if (!s3::is_token(f.name_string()) || !s3::is_field_value(f.value())) {
                log::warn("dropped a response header with characters not allowed in HTTP",
                          {{"header", std::string(f.name_string())}});
                continue;
            }
            msg.insert(f.name_string(), f.value());
        }
        msg.set(http::field::server, "Depot");
        msg.set(http::field::date, http_date_now());
        msg.keep_alive(keep_alive);
    };
    if (!res.stream) {
        http::response<http::string_body> msg{res.status, version};
        set_common(msg);
        const bool no_body = res.status == http::status::not_modified ||
                             res.status == http::status::no_content ||
                             (res.status >= http::status::continue_ && res.status < http::status::ok);
        if (res.head_only) {
            // HEAD answers carry the entity's headers (including its Content-Length) and no bytes.
            if (!msg.has_content_length())
                msg.content_length(res.body.size());
        } else if (!no_body) {
            msg.body() = std::move(res.body);
            msg.prepare_payload();
        }
        tcp_of(stream).expires_after(opts.io_timeout);
        http::response_serializer<http::string_body> sr{msg};
        if (res.head_only || no_body)
            co_await http::async_write_header(stream, sr, asio::redirect_error(asio::use_awaitable, ec));
        else
            co_await http::async_write(stream, sr, asio::redirect_error(asio::use_awaitable, ec));
        co_return !ec;
    }

    http::response<http::empty_body> msg{res.status, version};
    set_common(msg);
    msg.content_length(res.stream_length);
    http::response_serializer<http::empty_body> sr{msg};
    tcp_of(stream).expires_after(opts.io_timeout);
    co_await http::async_write_header(stream, sr, asio::redirect_error(asio::use_awaitable, ec));
    if (ec)
        co_return false;
    // The bytes go out from where the source holds them (for RADOS, librados's own buffers): no copy here.
    std::uint64_t left = res.stream_length;
    while (left > 0) {
        auto v = co_await res.stream->read_view(
            static_cast<std::size_t>(std::min<std::uint64_t>(stream_chunk, left)));
        if (!v || v->empty()) {
            // The header promised more bytes than we can deliver: the only honest signal is to cut the
            // connection, so the client sees a short body instead of a corrupt object.
            log::error("object stream failed mid-response",
                       {{"error", v ? "unexpected end" : v.error().message}});
            co_return false;
        }
        tcp_of(stream).expires_after(opts.io_timeout);
        co_await asio::async_write(stream, asio::buffer(v->data(), v->size()), transfer_whole{v->size()},
                                   asio::redirect_error(asio::use_awaitable, ec));
        if (ec)
            co_return false;
        left -= v->size();
    }
    co_return true;
}

/// An S3 error answer for failures found before there is a request to dispatch (the connection closes
/// after it).
response early_error(std::string_view code, unsigned status, std::string message,
                     const std::string& request_id)
{
    s3::error_info info{.code = code, .status = status, .message = std::move(message)};
    response res;
    res.status = static_cast<http::status>(status);
    res.headers.set(http::field::content_type, "application/xml");
    res.headers.set("x-amz-request-id", request_id);
    res.headers.set("x-amz-id-2", request_id);
    res.body = s3::error_xml(info, "", request_id);
    return res;
}

/// Before closing a connection on which the client may still be sending (an oversized header, plain
/// HTTP on the TLS port): reads and discards for a short while, so the close does not turn into a TCP
/// reset that can destroy the error answer before the client has read it.
template <class Stream>
asio::awaitable<void> linger(Stream& stream)
{
    boost::system::error_code ec;
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>)
        stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
    tcp_of(stream).expires_after(linger_timeout);
    std::vector<char> sink(16 * 1024);
    for (std::size_t total = 0; total < linger_bytes;) {
        auto n = co_await stream.async_read_some(asio::buffer(sink),
                                                 asio::redirect_error(asio::use_awaitable, ec));
        if (ec)
            break;
        total += n;
    }
}

/// A connection's entry in the registry, for the life of the session. Declared after the stream it
/// watches, so it is unregistered before the stream goes away.
class registration
{
public:
    registration(connection_registry& registry, beast::tcp_stream& stream)
        : registry_(registry), state_(std::make_shared<live_state>(live_state{true, &stream})),
          entry_{[weak = std::weak_ptr<live_state>(state_), ex = stream.get_executor()](bool force) {
              // Runs on the connection's strand like the session itself, so it sees either a live session
              // or an expired pointer, never a dangling one.
              asio::post(ex, [weak, force] {
                  if (auto s = weak.lock(); s && (s->idle || force))
                      s->stream->socket().close();
              });
          }}
    {
        registry_.add(&entry_);
    }
    ~registration() { registry_.remove(&entry_); }
    registration(const registration&) = delete;
    registration& operator=(const registration&) = delete;

    /// Idle connections (between requests, or not yet past the TLS handshake) are closed at shutdown
    /// right away; busy ones get the grace period.
    void set_idle(bool idle) noexcept { state_->idle = idle; }

private:
    struct live_state
    {
        bool idle = true;
        beast::tcp_stream* stream;
    };
    connection_registry& registry_;
    std::shared_ptr<live_state> state_;
    connection_registry::entry entry_;
};

std::string remote_address(beast::tcp_stream& stream)
{
    boost::system::error_code ec;
    auto ep = stream.socket().remote_endpoint(ec);
    return ec ? std::string() : ep.address().to_string();
}

/// The request loop, the same for plain and TLS streams: read a header, dispatch, answer, repeat while the
/// connection is kept alive.
template <class Stream>
asio::awaitable<void> serve(Stream& stream, beast::flat_buffer& buffer, registration& reg,
                            const std::string& remote, services& svc, connection_registry& registry,
                            listener_kind listener)
{
    const auto& opts = svc.opts;
    while (!registry.stopping()) {
        parser_t parser;
        parser.header_limit(static_cast<std::uint32_t>(opts.max_header_bytes));
        parser.body_limit(boost::none);
        reg.set_idle(true);
        tcp_of(stream).expires_after(opts.idle_timeout);
        boost::system::error_code ec;
        co_await http::async_read_header(stream, buffer, parser,
                                         asio::redirect_error(asio::use_awaitable, ec));
        reg.set_idle(false);
        if (ec) {
            if (ec == http::error::header_limit) {
                // S3's answer to an oversized header section; the rest of the request is unread, so the
                // connection cannot be reused.
                auto request_id = new_request_id();
                log::info("request header too large",
                          {{"remote", remote}, {"limit", opts.max_header_bytes}, {"request_id", request_id}});
                auto res = early_error("RequestHeaderSectionTooLarge", 400,
                                       "Your request header section exceeds the maximum allowed size (" +
                                           std::to_string(opts.max_header_bytes) + " bytes).",
                                       request_id);
                if (co_await write_response(stream, res, false, 11, opts))
                    co_await linger(stream);
            } else if (ec != http::error::end_of_stream && ec != asio::error::operation_aborted &&
                       ec != beast::error::timeout && ec != asio::error::connection_reset &&
                       ec != asio::error::bad_descriptor && ec != asio::error::eof &&
                       ec != asio::ssl::error::stream_truncated) {
                log::debug("bad request header", {{"remote", remote}, {"error", ec.message()}});
            }
            co_return;
        }

        const auto& header = parser.get().base();
        // One Host (RFC 9112 3.2): with two, the one that routes (virtual hosting) and the one a proxy or a
        // signature read could differ. Refused, and the connection closes (the body is unread).
        if (header.count(http::field::host) > 1) {
            auto request_id = new_request_id();
            log::debug("two Host headers", {{"remote", remote}, {"request_id", request_id}});
            auto res =
                early_error("InvalidRequest", 400, "A request has exactly one Host header.", request_id);
            if (co_await write_response(stream, res, false, header.version(), opts))
                co_await linger(stream);
            co_return;
        }
        const bool expect_continue =
            beast::iequals(header[http::field::expect], "100-continue") && header.version() >= 11;
        body_source<Stream> body(stream, buffer, parser, expect_continue, opts.io_timeout);
        // An empty body has nothing to wait for: "100 Continue" at once, as S3 does. botocore sends the
        // expectation with empty PutObjects too, and when a final response came instead it read its next
        // response on the connection with that stale status line, then waited for a body that never came.
        if (expect_continue && body.done() && !(co_await body.send_continue()))
            co_return;

        request_context ctx;
        ctx.header = &parser.get().base();
        ctx.request_id = new_request_id();
        ctx.body = &body;
        ctx.svc = &svc;
        if (auto len = parser.content_length())
            ctx.content_length = *len;
        ctx.remote = remote;
        ctx.secure = !std::is_same_v<Stream, beast::tcp_stream>;
        ctx.listener = listener;

        auto res = co_await dispatch(ctx);
        bool keep_alive = parser.get().keep_alive() && !registry.stopping() && !body.failed();
        if (keep_alive && !(co_await drain_body(body)))
            keep_alive = false;
        res.headers.set("x-amz-request-id", ctx.request_id);
        res.headers.set("x-amz-id-2", ctx.request_id);
        if (!(co_await write_response(stream, res, keep_alive, header.version(), opts)))
            co_return;
        if (!keep_alive) {
            // An answer given before the body was read (a refused upload): the client may still be sending.
            if (!body.done() && !body.failed() && !body.continue_pending())
                co_await linger(stream);
            co_return;
        }
    }
}

} // namespace

void connection_registry::add(entry* e)
{
    std::lock_guard lock(mutex_);
    live_.insert(e);
}

void connection_registry::remove(entry* e)
{
    std::lock_guard lock(mutex_);
    live_.erase(e);
}

void connection_registry::begin_shutdown()
{
    stopping_.store(true);
    std::lock_guard lock(mutex_);
    for (auto* e : live_)
        e->close(false);
}

void connection_registry::close_all()
{
    std::lock_guard lock(mutex_);
    for (auto* e : live_)
        e->close(true);
}

std::size_t connection_registry::size() const
{
    std::lock_guard lock(mutex_);
    return live_.size();
}

bool connection_registry::try_open(std::size_t limit) noexcept
{
    auto n = open_.load();
    do {
        if (limit != 0 && n >= limit)
            return false;
    } while (!open_.compare_exchange_weak(n, n + 1));
    return true;
}

asio::awaitable<void> run_session(beast::tcp_stream stream, services& svc, connection_registry& registry,
                                  listener_kind listener)
{
    registration reg(registry, stream);
    beast::flat_buffer buffer;
    const auto remote = remote_address(stream);
    co_await serve(stream, buffer, reg, remote, svc, registry, listener);
    boost::system::error_code ignored;
    stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
    stream.socket().close(ignored);
}

asio::awaitable<void> run_tls_session(beast::tcp_stream tcp, std::shared_ptr<asio::ssl::context> tls,
                                      services& svc, connection_registry& registry, listener_kind listener)
{
    tls_stream stream(std::move(tcp), *tls);
    auto& lowest = tcp_of(stream);
    registration reg(registry, lowest);
    const auto remote = remote_address(lowest);
    beast::flat_buffer buffer;
    boost::system::error_code ec;

    // A TLS client starts with a handshake record; anything else is most likely plain HTTP sent to the
    // HTTPS port, which gets a readable answer instead of a TLS alert the client would not understand.
    lowest.expires_after(std::min<std::chrono::seconds>(handshake_timeout, svc.opts.idle_timeout));
    bool is_tls =
        co_await beast::async_detect_ssl(lowest, buffer, asio::redirect_error(asio::use_awaitable, ec));
    if (!ec && !is_tls) {
        auto request_id = new_request_id();
        log::debug("plain HTTP on the TLS port", {{"remote", remote}, {"request_id", request_id}});
        auto res =
            early_error("InvalidRequest", 400,
                        "This port speaks HTTPS only: send the request with https:// (TLS).", request_id);
        if (co_await write_response(lowest, res, false, 11, svc.opts))
            co_await linger(lowest);
    } else if (!ec) {
        auto used = co_await stream.async_handshake(asio::ssl::stream_base::server, buffer.data(),
                                                    asio::redirect_error(asio::use_awaitable, ec));
        if (ec) {
            log::debug("TLS handshake failed", {{"remote", remote}, {"error", ec.message()}});
        } else {
            buffer.consume(used);
            co_await serve(stream, buffer, reg, remote, svc, registry, listener);
            // close_notify both ways when the peer is still there; bounded, since a peer may never answer.
            if (lowest.socket().is_open()) {
                lowest.expires_after(tls_shutdown_timeout);
                co_await stream.async_shutdown(asio::redirect_error(asio::use_awaitable, ec));
            }
        }
    }
    boost::system::error_code ignored;
    lowest.socket().close(ignored);
}

} // namespace depot::server
