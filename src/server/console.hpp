#pragma once
/// \file
/// The web console: the static files of ui/ (embedded at build time by cmake/embed_ui.cmake), or of the
/// directory --ui-dir names (read on each request; only plain relative names that resolve to a regular file
/// inside it), served at /ui/ without authentication, on the console's own listener (--console-listen,
/// config/options.hpp) only: another origin than the S3 listener's, where users' objects are served. The
/// console is a client of the REST API like any other: it holds no credential of its own and every action it
/// offers is a REST call made with the signed-in user's session.

#include "server/context.hpp"

#include <optional>
#include <string_view>
#include <vector>

namespace depot::server {

struct console_asset
{
    std::string_view path; ///< below /ui/, e.g. "app.js"
    std::string_view body;
};

/// Generated from ui/ (build directory, generated/console_assets.cpp).
const std::vector<console_asset>& embedded_console_assets();

/// True for the requests the console's handler answers: GET and HEAD of /ui and below, on any listener; and
/// on the console's own listener (--console-listen) everything but the REST API, /healthz and /readyz: no
/// S3 and no Hub API on the console's origin, so that nothing users store is ever served there.
bool is_console_request(const request_context& ctx) noexcept;

/// The answer to a console request: on a listener that serves the console, the file (with its Content-Type,
/// a strict Content-Security-Policy, nosniff, no framing, revalidation by ETag), a redirect from /ui to
/// /ui/, or 404; on the S3 listener, 404 naming the console's own address; on the console's listener,
/// anything but its pages and the REST API is 404 saying where S3 is.
response console_response(const request_context& ctx);

} // namespace depot::server
