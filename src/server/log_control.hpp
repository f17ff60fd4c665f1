#pragma once
/// \file
/// Changing the log level of a running depotd: SIGUSR1 switches to `debug`, SIGUSR2 back to the level it
/// was started with (--log-level). Each change is logged at warn level (visible unless the level is error).
///
///     kill -USR1 $(pidof depotd)   # debug logs on
///     kill -USR2 $(pidof depotd)   # and off again

#include "common/log.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

namespace depot::server {

/// Handles SIGUSR1/SIGUSR2 on `ioc` until SIGINT or SIGTERM (the server's shutdown signals) arrives or it is
/// destroyed. Create and destroy it with the server, on the thread that runs `ioc` or before it runs.
class log_level_signals
{
public:
    log_level_signals(boost::asio::io_context& ioc, log::level configured);
    log_level_signals(const log_level_signals&) = delete;
    log_level_signals& operator=(const log_level_signals&) = delete;

private:
    void wait();

    boost::asio::signal_set signals_;
    log::level configured_;
};

} // namespace depot::server
