#include "server/server.hpp"

#include "common/http_date.hpp"
#include "common/log.hpp"
#include "common/metrics.hpp"
#include "common/secret_box.hpp"
#include "config/blob_store_factory.hpp"
#include "registry/pg/migrations.hpp"
#include "registry/service/warmups.hpp"
#include "registry/service/webhooks.hpp"
#include "server/health.hpp"
#include "server/log_control.hpp"
#include "server/maintenance.hpp"
#include "server/metrics_endpoint.hpp"
#include "server/rate_limit.hpp"
#include "server/services.hpp"
#include "server/session.hpp"
#include "server/tls.hpp"
#include "server/warmup/worker.hpp"
#include "server/webhooks/dispatcher.hpp"
#include "storage/cache/cached_blob_store.hpp"
#include "storage/instrumented/instrumented_blob_store.hpp"
#include "storage/localfs/localfs_blob_store.hpp"
#include "storage/memory/memory_blob_store.hpp"
#include "storage/rados/rados_blob_store.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <iterator>
#include <sys/resource.h>
#include <thread>

namespace depot::server {
namespace {

using tcp = asio::ip::tcp;

tcp::endpoint parse_listen(const std::string& listen, const std::string& flag = "--listen")
{
    auto colon = listen.rfind(':');
    if (colon == std::string::npos)
        throw std::runtime_error(flag + " must be HOST:PORT, got '" + listen + "'");
    std::string host = listen.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    if (host.empty() || host == "*")
        host = "0.0.0.0";
    if (host == "localhost")
        host = "127.0.0.1";
    boost::system::error_code ec;
    auto address = asio::ip::make_address(host, ec);
    if (ec)
        throw std::runtime_error(flag + " host must be an IP address, got '" + host + "'");
    int port = 0;
    try {
        port = std::stoi(listen.substr(colon + 1));
    } catch (const std::exception&) {
        port = -1;
    }
    if (port < 0 || port > 65535)
        throw std::runtime_error(flag + " port is not a port number: '" + listen + "'");
    return {address, static_cast<unsigned short>(port)};
}

/// Accepts connections until the acceptor closes. Connections beyond --max-connections, or beyond
/// --max-connections-per-address from one client address, are closed at once: that costs nothing (no TLS
/// handshake, no parsing), and S3 clients retry a connection closed before an answer, so the limit sheds
/// load without tying up resources on the refusals. The per-address limit keeps one client from holding
/// every slot. With `tls`, every new connection takes the context current at its accept and keeps it.
asio::awaitable<void> accept_loop(tcp::acceptor& acceptor, services& svc, connection_registry& registry,
                                  const tls_context_store* tls, listener_kind listener)
{
    auto& ioc = static_cast<asio::io_context&>(acceptor.get_executor().context());
    asio::steady_timer backoff(ioc);
    std::chrono::steady_clock::time_point last_refusal_log{};
    std::chrono::steady_clock::time_point last_per_address_log{};
    std::uint64_t refused = 0;
    auto& refusals = metrics::default_registry().counters(
        "depot_connections_refused_total",
        "Connections closed right after their accept, by reason: max_connections (--max-connections "
        "reached), per_address (--max-connections-per-address reached by the client's address).",
        {"reason"});
    auto& refused_total = refusals.add({"max_connections"});
    auto& refused_per_address = refusals.add({"per_address"});
    for (;;) {
        boost::system::error_code ec;
        tcp::socket socket(asio::make_strand(ioc));
        co_await acceptor.async_accept(socket, asio::redirect_error(asio::use_awaitable, ec));
        if (ec) {
            if (!acceptor.is_open() || ec == asio::error::operation_aborted)
                co_return;
            log::warn("accept failed", {{"error", ec.message()}});
            // Out of descriptors or memory: the connection stays queued, so retrying at once would spin.
            backoff.expires_after(std::chrono::milliseconds(100));
            co_await backoff.async_wait(asio::redirect_error(asio::use_awaitable, ec));
            continue;
        }
        const auto peer = socket.remote_endpoint(ec);
        const std::string address = ec ? std::string() : address_key(peer.address().to_string());
        if (!registry.try_open(svc.opts.max_connections)) {
            socket.close(ec);
            refused_total.inc();
            ++refused;
            auto now = std::chrono::steady_clock::now();
            if (now - last_refusal_log >= std::chrono::seconds(10)) {
                log::warn("connection limit reached; closing new connections",
                          {{"max_connections", svc.opts.max_connections}, {"refused", refused}});
                last_refusal_log = now;
                refused = 0;
            }
            continue;
        }
        if (!svc.connections_per_address.try_add(address, svc.opts.max_connections_per_address)) {
            registry.closed();
            socket.close(ec);
            refused_per_address.inc();
            auto now = std::chrono::steady_clock::now();
            if (now - last_per_address_log >= std::chrono::seconds(10)) {
                log::warn("connection limit per address reached; closing its new connections",
                          {{"address", address},
                           {"max_connections_per_address", svc.opts.max_connections_per_address}});
                last_per_address_log = now;
            }
            continue;
        }
        socket.set_option(tcp::no_delay(true), ec);
        auto ex = socket.get_executor();
        auto done = [&registry, &svc, address](std::exception_ptr e) {
            svc.connections_per_address.remove(address);
            registry.closed();
            if (!e)
                return;
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& ex) {
                log::error("connection failed", {{"error", ex.what()}});
            }
        };
        beast::tcp_stream stream(std::move(socket));
        if (tls)
            asio::co_spawn(ex, run_tls_session(std::move(stream), tls->current(), svc, registry, listener),
                           done);
        else
            asio::co_spawn(ex, run_session(std::move(stream), svc, registry, listener), done);
    }
}

/// Raises the soft limit on open descriptors to the hard limit (every connection is one), and warns when
/// even that leaves too little room for --max-connections.
/// The SSE master key from --sse-master-key-file: 64 hex characters. Unlike the server key it is never
/// created: an installation turns SSE-S3 on by provisioning it (and must keep it: objects sealed under it
/// cannot be read without it). Throws when the file cannot be read or holds no valid key.
std::string load_sse_master_key(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        throw std::runtime_error("--sse-master-key-file: cannot read " + path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto key = secret_box::parse_server_key(text);
    if (!key)
        throw std::runtime_error("--sse-master-key-file " + path + ": expected 64 hex characters");
    return std::move(*key);
}

void raise_descriptor_limit(std::size_t max_connections)
{
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) != 0)
        return;
    if (lim.rlim_cur < lim.rlim_max) {
        lim.rlim_cur = lim.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &lim);
        ::getrlimit(RLIMIT_NOFILE, &lim);
    }
    // Headroom for the database pool, blob files, the listener and logs.
    constexpr rlim_t reserve = 256;
    if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < max_connections + reserve)
        log::warn("open-file limit below --max-connections; connections beyond it fail to accept",
                  {{"open_file_limit", static_cast<std::uint64_t>(lim.rlim_cur)},
                   {"max_connections", max_connections}});
}

} // namespace

void run(const config::options& opts)
{
    log::level lvl = log::level::info;
    log::parse_level(opts.log_level, lvl);
    log::set_level(lvl);

    // TLS files first: a bad certificate or key is the operator's mistake to report before anything else.
    std::unique_ptr<tls_context_store> tls;
    if (!opts.tls_cert_file.empty()) {
        tls = std::make_unique<tls_context_store>(opts.tls_cert_file, opts.tls_key_file);
        auto info = tls->info();
        log::info("TLS certificate loaded", {{"file", opts.tls_cert_file},
                                             {"subject", info.subject},
                                             {"serial", info.serial},
                                             {"not_after", info.not_after}});
    }
    raise_descriptor_limit(opts.max_connections);

    unsigned threads = opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
    asio::io_context ioc(static_cast<int>(threads));

    std::string server_key;
    if (!opts.server_key_hex.empty()) {
        auto k = secret_box::parse_server_key(opts.server_key_hex);
        if (!k)
            throw std::runtime_error("DEPOT_SERVER_KEY: " + k.error().message);
        server_key = std::move(*k);
    } else {
        server_key = secret_box::load_or_create_server_key(opts.server_key_file);
    }

    auto pool = pg::make_pool(ioc.get_executor(),
                              {.conninfo = opts.database_url, .max_connections = opts.db_connections});
    // The cache sits above the instrumented store, so depot_blob_* metrics count only real backend calls.
    std::shared_ptr<storage::blob_store> store =
        storage::make_instrumented_blob_store(config::make_blob_store(opts));
    std::shared_ptr<storage::cached_blob_store> cache;
    if (opts.cache_memory_bytes > 0 || opts.cache_disk_bytes > 0) {
        cache = storage::make_cached_blob_store(store, {.memory_bytes = opts.cache_memory_bytes,
                                                        .disk_dir = opts.cache_dir,
                                                        .disk_bytes = opts.cache_disk_bytes});
        store = cache;
    } else {
        storage::register_cache_metrics();
    }
    register_readiness_metrics();
    auto webhook_svc = std::make_shared<registry::webhook_service>(*pool, server_key);
    services svc(opts, pool, store, std::move(server_key));
    if (!opts.sse_master_key_hex.empty() || !opts.sse_master_key_file.empty()) {
        std::string sse_key;
        if (!opts.sse_master_key_hex.empty()) {
            auto k = secret_box::parse_server_key(opts.sse_master_key_hex);
            if (!k)
                throw std::runtime_error("DEPOT_SSE_MASTER_KEY: expected 64 hex characters");
            sse_key = std::move(*k);
        } else {
            sse_key = load_sse_master_key(opts.sse_master_key_file);
        }
        svc.objects.set_sse_master_key(sse_key);
        svc.multipart.set_sse_master_key(std::move(sse_key));
    }
    svc.metrics_token = load_metrics_token(opts);
    svc.webhooks = webhook_svc;
    svc.cache = cache;
    svc.warmups = std::make_shared<registry::warmup_service>(*pool);
    webhooks::dispatcher dispatcher(svc, ioc);
    warmup::worker warmup_worker(svc, ioc);
    lookup_cache_listener lookup_listener(svc);
    connection_registry registry;
    tcp::acceptor acceptor(ioc);
    // The console's own listener (config/options.hpp): its pages and REST with session cookies, on another
    // origin than the objects users store. Closed with the other at shutdown.
    tcp::acceptor console_acceptor(ioc);
    const std::string console_at = config::console_address(opts);
    const bool console_apart = console_at != "off" && console_at != "shared";
    asio::signal_set signals(ioc, SIGINT, SIGTERM);
    asio::signal_set reload_signal(ioc, SIGHUP);
    log_level_signals level_signals(ioc, lvl);
    asio::steady_timer drain_timer(ioc);
    asio::steady_timer cleanup_timer(ioc);
    asio::steady_timer seal_timer(ioc);
    asio::steady_timer intent_timer(ioc);
    std::exception_ptr startup_failure;

    auto startup = [&]() -> asio::awaitable<void> {
        {
            auto conn = co_await pool->acquire();
            if (opts.migrate) {
                auto status = co_await pg::migrate(*conn);
                log::info("database schema ready", {{"version", status.current}});
            } else {
                auto status = co_await pg::migration_state(*conn);
                if (status.current != status.latest)
                    throw std::runtime_error("database schema is at version " +
                                             std::to_string(status.current) + ", this depotd needs " +
                                             std::to_string(status.latest) +
                                             ": run `depotctl migrate` or start with --migrate true");
            }
        }
        // Before any delivery: secrets sealed before schema 0014 are bound to their rows (and keep working).
        const std::size_t rebound = co_await webhook_svc->bind_legacy_secrets();
        if (rebound)
            log::info("webhook secrets re-sealed bound to their subscriptions", {{"subscriptions", rebound}});
        lookup_listener.start(); // after the migrations: the notices come from schema 0012's triggers
        auto endpoint = parse_listen(opts.listen);
        acceptor.open(endpoint.protocol());
        acceptor.set_option(tcp::acceptor::reuse_address(true));
        acceptor.bind(endpoint);
        acceptor.listen(asio::socket_base::max_listen_connections);
        auto bound = acceptor.local_endpoint();
        log::info("listening", {{"address", bound.address().to_string() + ":" + std::to_string(bound.port())},
                                {"storage", std::string(store->kind())},
                                {"tls", tls != nullptr},
                                {"threads", threads},
                                {"console", console_apart ? "own listener" : console_at}});
        if (console_apart) {
            auto console_endpoint = parse_listen(console_at, "--console-listen");
            console_acceptor.open(console_endpoint.protocol());
            console_acceptor.set_option(tcp::acceptor::reuse_address(true));
            console_acceptor.bind(console_endpoint);
            console_acceptor.listen(asio::socket_base::max_listen_connections);
            auto console_bound = console_acceptor.local_endpoint();
            svc.console_port = console_bound.port();
            log::info("console listening", {{"address", console_bound.address().to_string() + ":" +
                                                            std::to_string(console_bound.port())},
                                            {"tls", tls != nullptr}});
        } else if (console_at == "shared") {
            log::warn(
                "the console shares the S3 listener (--console-listen shared): stored objects are served "
                "on the console's origin, kept from its sessions by their sandbox CSP only");
        }
        asio::co_spawn(ioc, cleanup_loop(svc, cleanup_timer, registry), asio::detached);
        asio::co_spawn(ioc, seal_loop(svc, seal_timer, registry), asio::detached);
        asio::co_spawn(ioc, intent_loop(svc, intent_timer), asio::detached);
        dispatcher.start();
        warmup_worker.start();
        if (console_apart)
            asio::co_spawn(ioc,
                           accept_loop(console_acceptor, svc, registry, tls.get(), listener_kind::console),
                           [&](std::exception_ptr e) {
                               if (e && !startup_failure && !registry.stopping()) {
                                   startup_failure = e;
                                   ioc.stop();
                               }
                           });
        co_await accept_loop(acceptor, svc, registry, tls.get(),
                             console_at == "shared" ? listener_kind::shared : listener_kind::s3);
    };
    asio::co_spawn(ioc, startup(), [&](std::exception_ptr e) {
        if (e && !startup_failure && !registry.stopping()) {
            startup_failure = e;
            ioc.stop();
        }
    });

    // SIGHUP reloads the TLS certificate and key for new connections; a failed reload keeps the current
    // ones. (Without TLS there is nothing to reload, and SIGHUP must not end the process either.)
    std::function<void()> wait_for_reload = [&] {
        reload_signal.async_wait([&](boost::system::error_code ec, int) {
            if (ec)
                return;
            if (!tls) {
                log::info("SIGHUP: nothing to reload (TLS is off)");
            } else if (auto info = tls->reload()) {
                log::info("TLS certificate reloaded", {{"file", tls->cert_file()},
                                                       {"subject", info->subject},
                                                       {"serial", info->serial},
                                                       {"not_after", info->not_after}});
            } else {
                log::error("TLS reload failed; new connections keep the previous certificate",
                           {{"error", info.error().message}});
            }
            wait_for_reload();
        });
    };
    wait_for_reload();

    signals.async_wait([&](boost::system::error_code ec, int sig) {
        if (ec)
            return;
        reload_signal.cancel();
        log::info("shutting down", {{"signal", sig}, {"connections", registry.size()}});
        boost::system::error_code ignored;
        acceptor.close(ignored);
        console_acceptor.close(ignored);
        cleanup_timer.cancel();
        seal_timer.cancel();
        registry.begin_shutdown();
        dispatcher.stop();
        warmup_worker.stop();
        lookup_listener.stop();
        // Wait until every connection has finished its request, or the grace period is over.
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                auto deadline = std::chrono::steady_clock::now() + opts.shutdown_grace;
                while (registry.size() != 0 && std::chrono::steady_clock::now() < deadline) {
                    drain_timer.expires_after(std::chrono::milliseconds(50));
                    co_await drain_timer.async_wait(asio::use_awaitable);
                }
                if (registry.size() != 0) {
                    log::warn("grace period over; closing busy connections",
                              {{"connections", registry.size()}});
                    registry.close_all();
                    for (int i = 0; i < 100 && registry.size() != 0; ++i) {
                        drain_timer.expires_after(std::chrono::milliseconds(50));
                        co_await drain_timer.async_wait(asio::use_awaitable);
                    }
                }
                intent_timer.cancel();
                // With the acceptor and every connection closed, run() returns once the last handler is
                // done, so every coroutine unwinds normally before the services are destroyed.
                if (registry.size() != 0) {
                    log::error("connections did not close; exiting without cleanup");
                    std::_Exit(1);
                }
            },
            asio::detached);
    });

    std::vector<std::thread> workers;
    for (unsigned i = 1; i < threads; ++i)
        workers.emplace_back([&] { ioc.run(); });
    ioc.run();
    for (auto& t : workers)
        t.join();
    if (startup_failure)
        std::rethrow_exception(startup_failure);
    log::info("stopped");
}

} // namespace depot::server
