#include "server/webhooks/dispatcher.hpp"

#include "auth/sigv4.hpp"
#include "common/hash.hpp"
#include "common/json.hpp"
#include "common/log.hpp"
#include "common/metrics.hpp"
#include "common/uri.hpp"
#include "registry/pg/listener.hpp"
#include "server/api/http_api.hpp"
#include "server/services.hpp"
#include "server/webhooks/manifest.hpp"
#include "server/webhooks/target.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <unistd.h>

namespace depot::server::webhooks {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;

constexpr std::size_t excerpt_bytes = 1024;

/// Delivery attempts by result, and how long each took (connect, send, answer). Registered once per
/// process; every dispatcher of the process shares them.
struct attempt_metrics
{
    metrics::counter& delivered;
    metrics::counter& receiver_error; ///< the receiver answered, but not with 2xx
    metrics::counter& no_response;    ///< refused target, connection, TLS, timeout
    metrics::histogram& duration;

    static attempt_metrics& get()
    {
        static attempt_metrics* m = [] {
            auto& reg = metrics::default_registry();
            auto& attempts = reg.counters("depot_webhook_attempts_total",
                                          "Webhook delivery attempts, by result.", {"result"});
            auto& duration = reg.histograms("depot_webhook_attempt_duration_seconds",
                                            "Duration of webhook delivery attempts.", {},
                                            metrics::latency_buckets_us(), 1e6);
            return new attempt_metrics{attempts.add({"delivered"}), attempts.add({"receiver_error"}),
                                       attempts.add({"no_response"}), duration.add({})};
        }();
        return *m;
    }
};

std::string host_instance()
{
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0)
        name[0] = '\0';
    return std::string(name) + ":" + std::to_string(::getpid());
}

/// Printable ASCII only (the excerpt is stored as text and shown in JSON), at most excerpt_bytes.
std::string excerpt_of(std::string_view body)
{
    std::string out;
    for (char c : body.substr(0, excerpt_bytes)) {
        const auto u = static_cast<unsigned char>(c);
        out += (u >= 0x20 && u < 0x7F) || c == '\n' || c == '\t' ? c : '?';
    }
    return out;
}

struct answer
{
    std::optional<int> status;
    std::string body;
    std::string location;
    std::optional<std::string> error;
};

template <class Stream>
asio::awaitable<answer> exchange(Stream& stream, http::request<http::string_body>& req)
{
    answer out;
    boost::system::error_code ec;
    co_await http::async_write(stream, req, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
        out.error = "sending the request failed: " + ec.message();
        co_return out;
    }
    beast::flat_buffer buffer;
    // The answer's status decides; its body is read only as far as the excerpt the attempt records. No
    // body limit: a parser's limit fails the read of the header already when Content-Length exceeds it, and
    // a 2xx with a long body is a delivery like any other.
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(boost::none);
    co_await http::async_read_header(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
        out.error = "reading the response failed: " + ec.message();
        co_return out;
    }
    out.status = static_cast<int>(parser.get().result_int());
    if (auto it = parser.get().find(http::field::location); it != parser.get().end())
        out.location = std::string(it->value());
    // A body that is too long, cut short or slow is fine: reading stops at the excerpt's length, at the
    // body's end or at the first error, and the status stands.
    std::string excerpt(excerpt_bytes, '\0');
    std::size_t got = 0;
    while (!parser.is_done() && got < excerpt.size()) {
        auto& body = parser.get().body();
        body.data = excerpt.data() + got;
        body.size = excerpt.size() - got;
        co_await http::async_read_some(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
        got = excerpt.size() - parser.get().body().size;
        if (ec == http::error::need_buffer)
            continue;
        if (ec)
            break;
    }
    excerpt.resize(got);
    out.body = std::move(excerpt);
    co_return out;
}

/// One POST to one of `endpoints` (in order) within `timeout`.
asio::awaitable<answer> post(const webhook_target& t, const std::vector<asio::ip::tcp::endpoint>& endpoints,
                             http::request<http::string_body>& req, std::chrono::seconds timeout,
                             ssl::context* tls)
{
    auto ex = co_await asio::this_coro::executor;
    boost::system::error_code ec;
    if (!t.tls) {
        beast::tcp_stream stream(ex);
        stream.expires_after(timeout);
        co_await stream.async_connect(endpoints, asio::redirect_error(asio::use_awaitable, ec));
        if (ec) {
            answer out;
            out.error = "connecting to " + t.host + ":" + t.port + " failed: " + ec.message();
            co_return out;
        }
        auto out = co_await exchange(stream, req);
        stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
        co_return out;
    }
    beast::ssl_stream<beast::tcp_stream> stream(ex, *tls);
    beast::get_lowest_layer(stream).expires_after(timeout);
    if (!SSL_set_tlsext_host_name(stream.native_handle(), t.host.c_str())) {
        answer out;
        out.error = "TLS: cannot set the server name";
        co_return out;
    }
    stream.set_verify_mode(ssl::verify_peer);
    stream.set_verify_callback(ssl::host_name_verification(t.host));
    co_await beast::get_lowest_layer(stream).async_connect(endpoints,
                                                           asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
        answer out;
        out.error = "connecting to " + t.host + ":" + t.port + " failed: " + ec.message();
        co_return out;
    }
    co_await stream.async_handshake(ssl::stream_base::client, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
        answer out;
        out.error = "TLS handshake with " + t.host + " failed: " + ec.message();
        co_return out;
    }
    auto out = co_await exchange(stream, req);
    beast::get_lowest_layer(stream).socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    co_return out;
}

ssl::context& client_tls()
{
    static ssl::context ctx = [] {
        ssl::context c(ssl::context::tls_client);
        c.set_default_verify_paths();
        c.set_verify_mode(ssl::verify_peer);
        return c;
    }();
    return ctx;
}

} // namespace

dispatcher::dispatcher(services& svc, asio::io_context& ioc)
    : svc_(svc), ioc_(ioc), strand_(asio::make_strand(ioc)), instance_(host_instance())
{}

dispatcher::~dispatcher()
{
    stop();
    if (listener_.joinable())
        listener_.join();
}

void dispatcher::start()
{
    attempt_metrics::get(); // the series exist (at 0) from the start, not from the first attempt
    const unsigned workers = std::max(1u, svc_.opts.webhook_concurrency);
    timers_.assign(workers, nullptr);
    for (std::size_t i = 0; i < workers; ++i)
        asio::co_spawn(strand_, worker(i), [](std::exception_ptr e) {
            if (!e)
                return;
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& ex) {
                log::error("webhook worker stopped", {{"error", ex.what()}});
            }
        });
    listener_ = std::thread([this] { listen_loop(); });
}

void dispatcher::stop()
{
    if (stopping_.exchange(true))
        return;
    wake();
}

void dispatcher::wake()
{
    asio::post(strand_, [this] {
        ++generation_;
        for (auto* t : timers_)
            if (t)
                t->cancel();
    });
}

void dispatcher::listen_loop()
{
    pg::listen_until(svc_.opts.database_url, "depot_events", "depotd-events", "webhooks", stopping_,
                     [this] { wake(); });
}

asio::awaitable<void> dispatcher::worker(std::size_t index)
{
    asio::steady_timer timer(strand_);
    auto& repo = *svc_.webhooks;
    // An attempt takes at most the timeout; the lease adds room to record it. A depotd that dies mid-attempt
    // delays the retry by this much.
    const auto lease = svc_.opts.webhook_timeout + std::chrono::seconds(5);
    while (!stopping_) {
        const auto generation = generation_;
        std::vector<registry::claimed_delivery> batch;
        bool failed = false;
        try {
            batch = co_await repo.claim(1, lease);
        } catch (const std::exception& e) {
            log::warn("webhooks: claiming deliveries failed; will retry", {{"error", e.what()}});
            failed = true;
        }
        if (!batch.empty()) {
            for (auto& d : batch)
                co_await deliver(std::move(d));
            continue;
        }
        if (!failed && generation != generation_)
            continue;
        timer.expires_after(svc_.opts.webhook_poll_interval);
        timers_[index] = &timer;
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        timers_[index] = nullptr;
    }
}

asio::awaitable<std::optional<link_key>> dispatcher::event_key_of(std::int64_t team_id,
                                                                  const std::string& team)
{
    if (auto it = keys_.find(team_id); it != keys_.end())
        co_return it->second;
    auto key = co_await team_link_key(svc_, team_id, team);
    if (key)
        keys_[team_id] = *key;
    co_return key;
}

asio::awaitable<std::string> dispatcher::body_of(const registry::claimed_delivery& d)
{
    boost::json::object data;
    if (auto parsed = json_parse(d.data_json); parsed && parsed->is_object())
        data = std::move(parsed->get_object());
    if (d.version_id)
        co_await add_manifest(
            svc_, *d.version_id,
            [this, team_id = d.team_id](const std::string& team) { return event_key_of(team_id, team); },
            data);
    boost::json::object body;
    body["id"] = "evt_" + std::to_string(d.event_id);
    body["type"] = json_string(d.event_type);
    body["timestamp"] = api::iso8601(d.event_created_at);
    body["data"] = std::move(data);
    co_return boost::json::serialize(body);
}

asio::awaitable<void> dispatcher::deliver(registry::claimed_delivery d)
{
    registry::attempt_outcome o;
    o.started_at = std::chrono::system_clock::now();
    const auto started = std::chrono::steady_clock::now();
    try {
        auto target = parse_target(d.url);
        if (!target) {
            o.error = target.error().message;
        } else if (d.secrets.empty()) {
            // Never an unsigned delivery: receivers would have to accept one to accept any.
            o.error = "the subscription's signing secret does not open (another server key, or a sealed "
                      "value that belongs to another subscription)";
        } else {
            auto endpoints = co_await resolve_target(*target, svc_.opts.webhook_allow_private,
                                                     svc_.opts.webhook_allow_cidr);
            if (!endpoints) {
                o.error = endpoints.error().message;
            } else {
                const std::string body = co_await body_of(d);
                const std::string id = "evt_" + std::to_string(d.event_id);
                const std::string timestamp =
                    std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
                http::request<http::string_body> req{http::verb::post, target->target, 11};
                const bool default_port = target->port == (target->tls ? "443" : "80");
                const std::string host_header =
                    (target->host.find(':') != std::string::npos ? "[" + target->host + "]" : target->host) +
                    (default_port ? "" : ":" + target->port);
                req.set(http::field::host, host_header);
                req.set(http::field::user_agent, "depot-webhooks/1");
                req.set(http::field::content_type, "application/json");
                req.set("webhook-id", id);
                req.set("webhook-timestamp", timestamp);
                req.set("webhook-signature", registry::webhook_signature(d.secrets, id, timestamp, body));
                req.body() = body;
                req.prepare_payload();
                ssl::context* tls = target->tls ? &client_tls() : nullptr;
                auto a = co_await post(*target, *endpoints, req, svc_.opts.webhook_timeout, tls);
                o.status = a.status;
                o.response_excerpt = excerpt_of(a.body);
                if (a.error) {
                    o.error = a.error;
                } else if (*a.status >= 200 && *a.status < 300) {
                    o.ok = true;
                } else if (*a.status >= 300 && *a.status < 400) {
                    o.error = "redirects are not followed (Location: " + excerpt_of(a.location) + ")";
                } else {
                    o.error = "the receiver answered HTTP " + std::to_string(*a.status);
                }
            }
        }
    } catch (const std::exception& e) {
        o.error = std::string("delivery failed: ") + e.what();
    }
    o.latency_ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started)
            .count());
    auto& m = attempt_metrics::get();
    m.duration.observe(metrics::micros_since(started));
    (o.ok ? m.delivered : o.status ? m.receiver_error : m.no_response).inc();
    const registry::retry_policy policy{.base = svc_.opts.webhook_retry_base,
                                        .max = svc_.opts.webhook_retry_max,
                                        .max_age = svc_.opts.webhook_max_age,
                                        .failure_limit = svc_.opts.webhook_failure_limit};
    try {
        co_await svc_.webhooks->finish(d, o, policy, instance_);
    } catch (const std::exception& e) {
        // The lease expires and the delivery is attempted again.
        log::warn("webhooks: recording an attempt failed", {{"delivery", d.id}, {"error", e.what()}});
    }
    log::info("webhook delivery attempt", {{"delivery", d.id},
                                           {"event", d.event_id},
                                           {"type", d.event_type},
                                           {"attempt", d.attempt},
                                           {"status", o.status.value_or(0)},
                                           {"ms", o.latency_ms},
                                           {"error", o.error.value_or("")}});
}

} // namespace depot::server::webhooks
