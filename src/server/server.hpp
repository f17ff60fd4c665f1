#pragma once
/// \file
/// depotd's top level: owns the I/O threads, the listener and the shared services.

#include "config/options.hpp"

#include <memory>

namespace depot::server {

/// Runs the server until SIGTERM/SIGINT, then shuts down gracefully: stops accepting, closes idle
/// connections, lets in-flight requests finish within `shutdown_grace`, and returns. Throws on start-up
/// failures (cannot bind, database unreachable, migration refused); the message says what to fix.
void run(const config::options& opts);

} // namespace depot::server
