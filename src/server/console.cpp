// The web console's static files (console.hpp).
#include "server/console.hpp"

#include "common/hash.hpp"

#include <map>
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
    return "application/octet-stream";
}

struct served
{
    std::string_view body;
    std::string etag;
};

const std::map<std::string, served, std::less<>>& assets()
{
    static const auto all = [] {
        std::map<std::string, served, std::less<>> out;
        for (const auto& a : embedded_console_assets())
            out.emplace(std::string(a.path),
                        served{a.body, "\"" + to_hex(sha256(a.body)).substr(0, 32) + "\""});
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

} // namespace

bool is_console_request(const request_context& ctx) noexcept
{
    const auto m = ctx.header->method();
    if (m != http::verb::get && m != http::verb::head)
        return false;
    auto target = ctx.header->target();
    std::string_view raw(target.data(), target.size());
    auto path = raw.substr(0, raw.find('?'));
    // "ui" is no valid bucket name (3 characters at least), so /ui is never an S3 path.
    return path == "/ui" || path.starts_with(prefix);
}

response console_response(const request_context& ctx)
{
    auto target = ctx.header->target();
    std::string_view raw(target.data(), target.size());
    auto path = raw.substr(0, raw.find('?'));
    response res;
    res.head_only = ctx.header->method() == http::verb::head;
    secure_headers(res);
    if (path == "/ui") {
        res.status = http::status::moved_permanently;
        res.headers.set(http::field::location, "/ui/");
        return res;
    }
    auto name = path.substr(prefix.size());
    if (name.empty())
        name = "index.html";
    const auto& all = assets();
    auto it = all.find(name);
    if (it == all.end()) {
        res.status = http::status::not_found;
        res.headers.set(http::field::content_type, "text/plain; charset=utf-8");
        res.body = "No such console page\n";
        return res;
    }
    // Revalidated on every use (cheap: an ETag match is a 304 with no body), so a new depotd's console is
    // picked up at once.
    res.headers.set(http::field::cache_control, "no-cache");
    res.headers.set(http::field::etag, it->second.etag);
    if (auto inm = ctx.get("if-none-match"); inm && *inm == it->second.etag) {
        res.status = http::status::not_modified;
        return res;
    }
    res.headers.set(http::field::content_type, content_type_of(name));
    res.body = std::string(it->second.body);
    return res;
}

} // namespace depot::server
