#pragma once
/// \file
/// The web console: the static files of ui/ (embedded at build time by cmake/embed_ui.cmake), or of the
/// directory --ui-dir names (read on each request; only plain relative names that resolve to a regular file
/// inside it), served at /ui/ without authentication. The console is a client of the REST API like any other:
/// it holds no credential of its own and every action it offers is a REST call made with the signed-in user's
/// session.

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

/// True for GET and HEAD requests of /ui and below.
bool is_console_request(const request_context& ctx) noexcept;

/// The answer to a console request: the file (with its Content-Type, a strict Content-Security-Policy,
/// nosniff, no framing, revalidation by ETag), a redirect from /ui to /ui/, or 404.
response console_response(const request_context& ctx);

} // namespace depot::server
