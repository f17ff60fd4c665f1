#include "server/session.hpp"

#include "common/hash.hpp"
#include "common/log.hpp"
#include "server/services.hpp"

#include <atomic>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <chrono>
#include <cstdio>

namespace depot::server {
namespace {

using parser_t = http::request_parser<http::buffer_body>;
constexpr std::size_t stream_chunk = 1 << 20;

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
    auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[40];
    std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    return buf;
}

/// The request body, pulled from the parser on demand. Sends "100 Continue" before the first read when the
/// client asked for it, so a request refused before its body is read never makes the client send it.
class body_source final : public registry::byte_source
{
public:
    body_source(beast::tcp_stream& stream, beast::flat_buffer& buffer, parser_t& parser, bool expect_continue,
                std::chrono::seconds timeout)
        : stream_(stream), buffer_(buffer), parser_(parser), expect_continue_(expect_continue),
          timeout_(timeout)
    {}

    asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override
    {
        if (buf.empty())
            co_return std::size_t{0};
        if (expect_continue_) {
            expect_continue_ = false;
            if (!parser_.is_done()) {
                http::response<http::empty_body> cont{http::status::continue_, 11};
                stream_.expires_after(timeout_);
                boost::system::error_code ec;
                co_await http::async_write(stream_, cont, asio::redirect_error(asio::use_awaitable, ec));
                if (ec)
                    co_return make_error(errc::incomplete_body, "connection lost before the body was sent");
            }
        }
        while (!parser_.is_done()) {
            parser_.get().body().data = buf.data();
            parser_.get().body().size = buf.size();
            stream_.expires_after(timeout_);
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

    bool failed() const noexcept { return failed_; }
    bool continue_pending() const noexcept { return expect_continue_; }

private:
    beast::tcp_stream& stream_;
    beast::flat_buffer& buffer_;
    parser_t& parser_;
    bool expect_continue_;
    std::chrono::seconds timeout_;
    bool failed_ = false;
};

/// Drains what is left of a small unread body so the connection can be reused; false = close instead.
asio::awaitable<bool> drain_body(body_source& body, parser_t& parser)
{
    if (parser.is_done())
        co_return true;
    // The client is still waiting for "100 Continue": it may or may not send the body now, so the stream
    // position is unknowable. Close.
    if (body.continue_pending())
        co_return false;
    auto remaining = parser.content_length_remaining();
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

asio::awaitable<bool> write_response(beast::tcp_stream& stream, response& res, bool keep_alive,
                                     unsigned version, const options& opts)
{
    boost::system::error_code ec;
    auto set_common = [&](auto& msg) {
        for (const auto& f : res.headers)
            msg.insert(f.name_string(), f.value());
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
        stream.expires_after(opts.io_timeout);
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
    stream.expires_after(opts.io_timeout);
    co_await http::async_write_header(stream, sr, asio::redirect_error(asio::use_awaitable, ec));
    if (ec)
        co_return false;
    std::vector<std::byte> buf(stream_chunk);
    std::uint64_t left = res.stream_length;
    while (left > 0) {
        auto n =
            co_await res.stream->read_some(std::span(buf.data(), std::min<std::uint64_t>(buf.size(), left)));
        if (!n || *n == 0) {
            // The header promised more bytes than we can deliver: the only honest signal is to cut the
            // connection, so the client sees a short body instead of a corrupt object.
            log::error("object stream failed mid-response",
                       {{"error", n ? "unexpected end" : n.error().message}});
            co_return false;
        }
        stream.expires_after(opts.io_timeout);
        co_await asio::async_write(stream, asio::buffer(buf.data(), *n),
                                   asio::redirect_error(asio::use_awaitable, ec));
        if (ec)
            co_return false;
        left -= *n;
    }
    co_return true;
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

asio::awaitable<void> run_session(beast::tcp_stream stream, services& svc, connection_registry& registry)
{
    const auto& opts = svc.opts;
    // Shared with the shutdown hook, which runs on this connection's strand like the session itself, so it
    // sees either a live session or an expired pointer, never a dangling one.
    struct live_state
    {
        bool idle = true;
        beast::tcp_stream* stream;
    };
    auto state = std::make_shared<live_state>(live_state{true, &stream});
    connection_registry::entry self{
        [weak = std::weak_ptr<live_state>(state), ex = stream.get_executor()](bool force) {
            asio::post(ex, [weak, force] {
                if (auto s = weak.lock(); s && (s->idle || force))
                    s->stream->socket().close();
            });
        }};
    bool& idle = state->idle;
    registry.add(&self);
    struct unregister
    {
        connection_registry& r;
        connection_registry::entry* e;
        ~unregister() { r.remove(e); }
    } guard{registry, &self};

    beast::flat_buffer buffer;
    std::string remote;
    {
        boost::system::error_code ec;
        auto ep = stream.socket().remote_endpoint(ec);
        if (!ec)
            remote = ep.address().to_string();
    }

    while (!registry.stopping()) {
        parser_t parser;
        parser.header_limit(static_cast<std::uint32_t>(opts.max_header_bytes));
        parser.body_limit(boost::none);
        idle = true;
        stream.expires_after(opts.idle_timeout);
        boost::system::error_code ec;
        co_await http::async_read_header(stream, buffer, parser,
                                         asio::redirect_error(asio::use_awaitable, ec));
        idle = false;
        if (ec) {
            if (ec == http::error::header_limit) {
                http::response<http::string_body> too_big{http::status::request_header_fields_too_large, 11};
                too_big.body() = "request header too large\n";
                too_big.prepare_payload();
                too_big.keep_alive(false);
                co_await http::async_write(stream, too_big, asio::redirect_error(asio::use_awaitable, ec));
            } else if (ec != http::error::end_of_stream && ec != asio::error::operation_aborted &&
                       ec != beast::error::timeout && ec != asio::error::connection_reset &&
                       ec != asio::error::bad_descriptor) {
                log::debug("bad request header", {{"remote", remote}, {"error", ec.message()}});
            }
            break;
        }

        const auto& header = parser.get().base();
        const bool expect_continue =
            beast::iequals(header[http::field::expect], "100-continue") && header.version() >= 11;
        body_source body(stream, buffer, parser, expect_continue, opts.io_timeout);

        request_context ctx;
        ctx.header = &parser.get().base();
        ctx.request_id = new_request_id();
        ctx.body = &body;
        ctx.svc = &svc;
        if (auto len = parser.content_length())
            ctx.content_length = *len;
        ctx.remote = remote;

        auto res = co_await dispatch(ctx);
        bool keep_alive = parser.get().keep_alive() && !registry.stopping() && !body.failed();
        if (keep_alive && !(co_await drain_body(body, parser)))
            keep_alive = false;
        res.headers.set("x-amz-request-id", ctx.request_id);
        res.headers.set("x-amz-id-2", ctx.request_id);
        if (!(co_await write_response(stream, res, keep_alive, header.version(), opts)) || !keep_alive)
            break;
    }
    boost::system::error_code ignored;
    stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
    stream.socket().close(ignored);
}

} // namespace depot::server
