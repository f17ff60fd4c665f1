// The web console's static files (console.hpp).
#include "server/console.hpp"

#include "common/hash.hpp"
#include "server/api/api.hpp"
#include "server/services.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>

namespace depot::server {
namespace {

constexpr std::string_view prefix = "/ui/";

// Scripts, styles, images and API calls only from depotd itself; no inline script or style, no plugins, no
// framing, forms post nowhere.
constexpr std::string_view csp =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

std::string_view content_type_of(std::string_view path)
{
    if (path.ends_with(".html"))
        return "text/html; charset=utf-8";
    if (path.ends_with(".js"))
        return "text/javascript; charset=utf-8";
    if (path.ends_with(".css"))
        return "text/css; charset=utf-8";
    if (path.ends_with(".svg"))
        return "image/svg+xml";
    if (path.ends_with(".png"))
        return "image/png";
    if (path.ends_with(".ico"))
        return "image/x-icon";
    if (path.ends_with(".json"))
        return "application/json";
    if (path.ends_with(".woff2"))
        return "font/woff2";
    if (path.ends_with(".txt"))
        return "text/plain; charset=utf-8";
    return "application/octet-stream";
}

std::string etag_of(std::string_view body)
{
    return "\"" + to_hex(sha256(body)).substr(0, 32) + "\"";
}

struct served
{
    std::string_view body;
    std::string etag;
};

/// A file of --ui-dir, read on each request (an operator's edit shows at once). `name` (the request path
/// below /ui/, not decoded) must be segments of letters, digits, '.', '_' and '-', none empty or starting
/// with '.' (no "..", no hidden files); and the file it names, symbolic links resolved, must be a regular
/// file inside the directory. nullopt otherwise, and for anything unreadable.
std::optional<std::string> read_from_dir(const std::string& dir, std::string_view name)
{
    if (name.empty() || name.size() > 255)
        return std::nullopt;
    bool segment_start = true;
    for (char c : name) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                           c == '_' || c == '-' || c == '.';
        if (c == '/') {
            if (segment_start)
                return std::nullopt; // empty segment
            segment_start = true;
            continue;
        }
        if (!plain || (segment_start && c == '.'))
            return std::nullopt;
        segment_start = false;
    }
    if (segment_start)
        return std::nullopt; // ends with '/'
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path root = fs::canonical(dir, ec);
    if (ec)
        return std::nullopt;
    const fs::path file = fs::canonical(root / fs::path(std::string(name)), ec);
    if (ec || !fs::is_regular_file(file, ec))
        return std::nullopt;
    // Inside the directory: the resolved path continues the root's components.
    auto [r, f] = std::mismatch(root.begin(), root.end(), file.begin(), file.end());
    if (r != root.end() || f == file.end())
        return std::nullopt;
    std::ifstream in(file, std::ios::binary);
    if (!in)
        return std::nullopt;
    std::ostringstream body;
    body << in.rdbuf();
    if (in.bad())
        return std::nullopt;
    return std::move(body).str();
}

const std::map<std::string, served, std::less<>>& assets()
{
    static const auto all = [] {
        std::map<std::string, served, std::less<>> out;
        for (const auto& a : embedded_console_assets())
            out.emplace(std::string(a.path), served{a.body, etag_of(a.body)});
        return out;
    }();
    return all;
}

void secure_headers(response& res)
{
    res.headers.set("content-security-policy", csp);
    res.headers.set("x-content-type-options", "nosniff");
    res.headers.set("x-frame-options", "DENY");
    res.headers.set("referrer-policy", "no-referrer");
    res.headers.set("cross-origin-opener-policy", "same-origin");
}

std::string_view target_of(const request_context& ctx) noexcept
{
    auto target = ctx.header->target();
    return {target.data(), target.size()};
}

std::string_view path_of(const request_context& ctx) noexcept
{
    auto raw = target_of(ctx);
    return raw.substr(0, raw.find('?'));
}

/// GET and HEAD of /ui and below.
bool is_page_request(const request_context& ctx) noexcept
{
    const auto m = ctx.header->method();
    if (m != http::verb::get && m != http::verb::head)
        return false;
    const auto path = path_of(ctx);
    // "ui" is no valid bucket name (3 characters at least), so /ui is never an S3 path.
    return path == "/ui" || path.starts_with(prefix);
}

response not_found(response res, std::string text)
{
    res.status = http::status::not_found;
    res.headers.set(http::field::content_type, "text/plain; charset=utf-8");
    res.body = std::move(text);
    return res;
}

/// The console's address as this request's client reaches this server: the Host it named (when it is a
/// plain host name or address), the console's port.
std::string console_url(const request_context& ctx)
{
    std::string_view host = ctx.get("host").value_or("");
    if (host.starts_with('[')) {
        host = host.substr(0, host.find(']') == std::string_view::npos ? 0 : host.find(']') + 1);
    } else if (auto colon = host.rfind(':'); colon != std::string_view::npos) {
        host = host.substr(0, colon);
    }
    const bool plain =
        !host.empty() && host.size() <= 255 && std::all_of(host.begin(), host.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                   c == '-' || c == ':' || c == '[' || c == ']';
        });
    const std::string scheme = ctx.svc->opts.tls_cert_file.empty() ? "http://" : "https://";
    return scheme + (plain ? std::string(host) : std::string("<this host>")) + ":" +
           std::to_string(ctx.svc->console_port) + "/ui/";
}

} // namespace

bool is_console_request(const request_context& ctx) noexcept
{
    if (ctx.listener == listener_kind::console)
        return !api::is_api_target(target_of(ctx));
    return is_page_request(ctx);
}

response console_response(const request_context& ctx)
{
    const auto path = path_of(ctx);
    response res;
    res.head_only = ctx.header->method() == http::verb::head;
    secure_headers(res);
    if (!is_page_request(ctx))
        return not_found(std::move(res),
                         "This is the web console's listener: it serves the console (/ui/) and "
                         "the REST API (/api/v1) only. S3 and the Hub API are on depotd's "
                         "--listen address.\n");
    if (!ctx.on_console_listener()) {
        if (ctx.svc->console_port == 0)
            return not_found(std::move(res),
                             "The web console is off on this server (--console-listen off).\n");
        return not_found(std::move(res), "The web console has an address of its own, apart from the objects "
                                         "served here: " +
                                             console_url(ctx) + "\n");
    }
    if (path == "/ui") {
        res.status = http::status::moved_permanently;
        res.headers.set(http::field::location, "/ui/");
        return res;
    }
    auto name = path.substr(prefix.size());
    if (name.empty())
        name = "index.html";
    std::optional<std::string> from_dir;
    std::string_view body;
    std::string etag;
    if (const auto& dir = ctx.svc->opts.ui_dir; !dir.empty()) {
        from_dir = read_from_dir(dir, name);
        if (from_dir) {
            body = *from_dir;
            etag = etag_of(body);
        }
    } else if (auto it = assets().find(name); it != assets().end()) {
        body = it->second.body;
        etag = it->second.etag;
    }
    if (etag.empty()) {
        res.status = http::status::not_found;
        res.headers.set(http::field::content_type, "text/plain; charset=utf-8");
        res.body = "No such console page\n";
        return res;
    }
    // Revalidated on every use (cheap: an ETag match is a 304 with no body), so a new depotd's console (or
    // an edited --ui-dir) is picked up at once.
    res.headers.set(http::field::cache_control, "no-cache");
    res.headers.set(http::field::etag, etag);
    if (auto inm = ctx.get("if-none-match"); inm && *inm == etag) {
        res.status = http::status::not_modified;
        return res;
    }
    res.headers.set(http::field::content_type, content_type_of(name));
    res.body = std::string(body);
    return res;
}

} // namespace depot::server
