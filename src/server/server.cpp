#include "server/server.hpp"

#include "common/log.hpp"
#include "common/secret_box.hpp"
#include "registry/pg/migrations.hpp"
#include "server/services.hpp"
#include "server/session.hpp"
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
#include <thread>

namespace depot::server {
namespace {

using tcp = asio::ip::tcp;

tcp::endpoint parse_listen(const std::string& listen)
{
    auto colon = listen.rfind(':');
    if (colon == std::string::npos)
        throw std::runtime_error("--listen must be HOST:PORT, got '" + listen + "'");
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
        throw std::runtime_error("--listen host must be an IP address, got '" + host + "'");
    int port = 0;
    try {
        port = std::stoi(listen.substr(colon + 1));
    } catch (const std::exception&) {
        port = -1;
    }
    if (port < 0 || port > 65535)
        throw std::runtime_error("--listen port is not a port number: '" + listen + "'");
    return {address, static_cast<unsigned short>(port)};
}

asio::awaitable<void> accept_loop(tcp::acceptor& acceptor, services& svc, connection_registry& registry)
{
    auto& ioc = static_cast<asio::io_context&>(acceptor.get_executor().context());
    for (;;) {
        boost::system::error_code ec;
        tcp::socket socket(asio::make_strand(ioc));
        co_await acceptor.async_accept(socket, asio::redirect_error(asio::use_awaitable, ec));
        if (ec) {
            if (!acceptor.is_open() || ec == asio::error::operation_aborted)
                co_return;
            log::warn("accept failed", {{"error", ec.message()}});
            continue;
        }
        socket.set_option(tcp::no_delay(true), ec);
        auto ex = socket.get_executor();
        asio::co_spawn(ex, run_session(beast::tcp_stream(std::move(socket)), svc, registry),
                       [](std::exception_ptr e) {
                           if (!e)
                               return;
                           try {
                               std::rethrow_exception(e);
                           } catch (const std::exception& ex) {
                               log::error("connection failed", {{"error", ex.what()}});
                           }
                       });
    }
}

/// Aborts multipart uploads older than the configured age and reclaims blob writes that never committed
/// (a crash mid-upload). Safe with several depotd processes: each upload is aborted under its row lock.
asio::awaitable<void> cleanup_loop(services& svc, asio::steady_timer& timer,
                                   const connection_registry& registry)
{
    while (!registry.stopping()) {
        timer.expires_after(svc.opts.cleanup_interval);
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (ec)
            co_return;
        try {
            const auto now = std::chrono::system_clock::now();
            auto aborted = co_await svc.multipart.abort_initiated_before(now - svc.opts.multipart_max_age);
            // A write that has not been touched for an hour is abandoned: uploads stream continuously.
            auto reclaimed = co_await svc.blobs->remove_incomplete(now - std::chrono::hours(1));
            if (aborted || (reclaimed && *reclaimed))
                log::info("cleanup",
                          {{"aborted_uploads", aborted}, {"incomplete_blobs", reclaimed ? *reclaimed : 0}});
        } catch (const std::exception& e) {
            log::warn("cleanup failed; will retry", {{"error", e.what()}});
        }
    }
}

std::shared_ptr<storage::blob_store> make_store(const options& opts)
{
    if (opts.storage == "memory")
        return storage::make_memory_blob_store();
    if (opts.storage == "rados")
        return storage::make_rados_blob_store({.conf_file = opts.rados_conf,
                                               .user = opts.rados_user,
                                               .keyring = opts.rados_keyring,
                                               .pool = opts.rados_pool,
                                               .ns = opts.rados_namespace,
                                               .stripe_size = opts.rados_stripe_size,
                                               .window = opts.rados_window});
    return storage::make_localfs_blob_store({.root = opts.blob_dir});
}

} // namespace

void run(const options& opts)
{
    log::level lvl = log::level::info;
    log::parse_level(opts.log_level, lvl);
    log::set_level(lvl);

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
    auto store = make_store(opts);
    services svc(opts, pool, store, std::move(server_key));
    connection_registry registry;
    tcp::acceptor acceptor(ioc);
    asio::signal_set signals(ioc, SIGINT, SIGTERM);
    asio::steady_timer drain_timer(ioc);
    asio::steady_timer cleanup_timer(ioc);
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
        auto endpoint = parse_listen(opts.listen);
        acceptor.open(endpoint.protocol());
        acceptor.set_option(tcp::acceptor::reuse_address(true));
        acceptor.bind(endpoint);
        acceptor.listen(asio::socket_base::max_listen_connections);
        auto bound = acceptor.local_endpoint();
        log::info("listening", {{"address", bound.address().to_string() + ":" + std::to_string(bound.port())},
                                {"storage", std::string(store->kind())},
                                {"threads", threads}});
        asio::co_spawn(ioc, cleanup_loop(svc, cleanup_timer, registry), asio::detached);
        co_await accept_loop(acceptor, svc, registry);
    };
    asio::co_spawn(ioc, startup(), [&](std::exception_ptr e) {
        if (e && !startup_failure && !registry.stopping()) {
            startup_failure = e;
            ioc.stop();
        }
    });

    signals.async_wait([&](boost::system::error_code ec, int sig) {
        if (ec)
            return;
        log::info("shutting down", {{"signal", sig}, {"connections", registry.size()}});
        boost::system::error_code ignored;
        acceptor.close(ignored);
        cleanup_timer.cancel();
        registry.begin_shutdown();
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
