#include "server/log_control.hpp"

#include <csignal>

namespace depot::server {

log_level_signals::log_level_signals(boost::asio::io_context& ioc, log::level configured)
    : signals_(ioc, SIGUSR1, SIGUSR2), configured_(configured)
{
    // Also woken by the shutdown signals, to stop waiting: a pending wait would keep io_context::run()
    // from returning once everything else has finished.
    signals_.add(SIGINT);
    signals_.add(SIGTERM);
    wait();
}

void log_level_signals::wait()
{
    signals_.async_wait([this](boost::system::error_code ec, int sig) {
        if (ec || sig == SIGINT || sig == SIGTERM)
            return; // the server is stopping
        const log::level next = sig == SIGUSR1 ? log::level::debug : configured_;
        log::set_level(next);
        log::warn("log level changed", {{"signal", sig == SIGUSR1 ? "SIGUSR1" : "SIGUSR2"},
                                        {"log_level", next == log::level::debug  ? "debug"
                                                      : next == log::level::info ? "info"
                                                      : next == log::level::warn ? "warn"
                                                                                 : "error"}});
        wait();
    });
}

} // namespace depot::server
