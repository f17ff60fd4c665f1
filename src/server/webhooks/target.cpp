#include "server/webhooks/target.hpp"

#include <algorithm>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/url/parse.hpp>
#include <charconv>

namespace depot::server::webhooks {
namespace {

result<webhook_target> bad(std::string message)
{
    return make_error(errc::invalid_argument, std::move(message), "url");
}

bool in_v4(std::uint32_t a, std::uint32_t net, int bits)
{
    const std::uint32_t mask = bits == 0 ? 0 : ~std::uint32_t(0) << (32 - bits);
    return (a & mask) == (net & mask);
}

bool public_v4(const asio::ip::address_v4& v4)
{
    const std::uint32_t a = v4.to_uint();
    constexpr struct
    {
        std::uint32_t net;
        int bits;
    } refused[] = {
        {0x00000000, 8},  {0x0A000000, 8},  {0x64400000, 10}, {0x7F000000, 8},
        {0xA9FE0000, 16}, {0xAC100000, 12}, {0xC0000000, 24}, {0xC0000200, 24},
        {0xC0A80000, 16}, {0xC6120000, 15}, {0xC6336400, 24}, {0xCB007100, 24},
        {0xE0000000, 4},  {0xF0000000, 4},  {0xC0586300, 24}, // 192.88.99.0/24, the deprecated 6to4 relay
                                                              // anycast (RFC 7526)
    };
    for (const auto& r : refused)
        if (in_v4(a, r.net, r.bits))
            return false;
    return true;
}

} // namespace

result<webhook_target> parse_target(std::string_view url)
{
    if (url.empty())
        return bad("The webhook url is empty");
    if (url.size() > 2048)
        return bad("The webhook url is longer than 2048 characters");
    auto parsed = boost::urls::parse_absolute_uri(url);
    if (!parsed)
        return bad("The webhook url is not an absolute URL: " + parsed.error().message());
    const auto& u = *parsed;
    webhook_target t;
    const std::string scheme(u.scheme());
    if (scheme == "https")
        t.tls = true;
    else if (scheme != "http")
        return bad("The webhook url must use http or https, not '" + scheme + "'");
    if (u.has_userinfo())
        return bad("The webhook url must not contain credentials (user:password@); the signature "
                   "authenticates deliveries");
    if (u.has_fragment())
        return bad("The webhook url must not have a fragment (#...)");
    t.host = u.encoded_host_address();
    if (t.host.size() >= 2 && t.host.front() == '[' && t.host.back() == ']')
        t.host = t.host.substr(1, t.host.size() - 2);
    if (t.host.empty())
        return bad("The webhook url has no host");
    if (u.has_port()) {
        // Boost.URL 1.81's port_number() wraps a port above 65535 ("844343" reads as 57911): the digits are
        // read here instead, so the port delivered to is the port named or the url is refused.
        const std::string_view digits = u.port();
        std::uint32_t number = 0;
        const auto* end = digits.data() + digits.size();
        const auto [ptr, ec] = std::from_chars(digits.data(), end, number);
        if (digits.empty() || ec != std::errc{} || ptr != end || number == 0 || number > 65535)
            return bad("The webhook url has an invalid port (1 to 65535)");
        t.port = std::to_string(number);
    } else {
        t.port = t.tls ? "443" : "80";
    }
    t.target = std::string(u.encoded_path());
    // After a host the path is empty or starts with '/'. Boost.URL 1.81 reads a host that only starts like an
    // IPv4 address ("http://8.8.8.8evil.example/x") as that address and a path "evil.example/x": refused
    // rather than delivered to another host than the one named.
    if (!t.target.empty() && t.target.front() != '/')
        return bad("The webhook url's host is not a valid host name or address");
    if (t.target.empty())
        t.target = "/";
    if (u.has_query())
        t.target += "?" + std::string(u.encoded_query());
    return t;
}

bool is_public_address(const asio::ip::address& a)
{
    if (a.is_v4())
        return public_v4(a.to_v4());
    const auto v6 = a.to_v6();
    if (v6.is_loopback() || v6.is_unspecified() || v6.is_link_local() || v6.is_site_local() ||
        v6.is_multicast())
        return false;
    const auto b = v6.to_bytes();
    // Forms that carry an IPv4 address lead to that IPv4 host, through a dual stack, a NAT64 gateway or a
    // 6to4 or Teredo relay: they are exactly as public as the address they embed.
    const auto v4_at = [&b](std::size_t at, std::uint32_t flip = 0) {
        const std::uint32_t v = (std::uint32_t(b[at]) << 24 | std::uint32_t(b[at + 1]) << 16 |
                                 std::uint32_t(b[at + 2]) << 8 | std::uint32_t(b[at + 3])) ^
                                flip;
        return public_v4(asio::ip::address_v4(v));
    };
    const auto zero = [&b](std::size_t from, std::size_t to) {
        return std::all_of(b.begin() + from, b.begin() + to, [](unsigned char c) { return c == 0; });
    };
    if (zero(0, 10) && b[10] == 0xFF && b[11] == 0xFF) // ::ffff:0:0/96 IPv4-mapped
        return v4_at(12);
    if (zero(0, 8) && b[8] == 0xFF && b[9] == 0xFF && zero(10, 12)) // ::ffff:0:0:0/96 IPv4-translated (SIIT)
        return v4_at(12);
    if (zero(0, 12)) // ::/96 IPv4-compatible (deprecated, still routed by some stacks)
        return v4_at(12);
    if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xFF && b[3] == 0x9B) {
        // NAT64: the well-known prefix 64:ff9b::/96 and the local-use 64:ff9b:1::/48 (RFC 8215) put the
        // IPv4 address in the last 32 bits; the rest of 64:ff9b::/32 is reserved.
        if (zero(4, 12) || (b[4] == 0x00 && b[5] == 0x01))
            return v4_at(12);
        return false;
    }
    if (b[0] == 0x20 && b[1] == 0x02) // 2002::/16 6to4: the relay's IPv4 address in bits 16..47
        return v4_at(2);
    if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x00 && b[3] == 0x00) // 2001::/32 Teredo
        // The Teredo server in bits 32..63, the client (inverted) in the last 32 bits.
        return v4_at(4) && v4_at(12, 0xFFFFFFFF);
    if ((b[0] & 0xFE) == 0xFC) // fc00::/7 unique local
        return false;
    if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0D && b[3] == 0xB8) // 2001:db8::/32 documentation
        return false;
    // Not globally reachable (IANA's special-purpose registry): 100::/64 discard-only (RFC 6666),
    // 2001:2::/48 benchmarking, 3fff::/20 documentation (RFC 9637), 5f00::/16 SRv6 SIDs (RFC 9602).
    if (b[0] == 0x01 && zero(1, 8))
        return false;
    if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x00 && b[3] == 0x02 && b[4] == 0x00 && b[5] == 0x00)
        return false;
    if (b[0] == 0x3F && b[1] == 0xFF && (b[2] & 0xF0) == 0x00)
        return false;
    if (b[0] == 0x5F && b[1] == 0x00)
        return false;
    return true;
}

asio::awaitable<result<std::vector<asio::ip::tcp::endpoint>>>
resolve_target(const webhook_target& t, bool allow_private, const allowed_networks& allowed)
{
    auto ex = co_await asio::this_coro::executor;
    asio::ip::tcp::resolver resolver(ex);
    boost::system::error_code ec;
    auto results =
        co_await resolver.async_resolve(t.host, t.port, asio::redirect_error(asio::use_awaitable, ec));
    if (ec || results.empty()) {
        std::string why = "The webhook host '" + t.host + "' does not resolve";
        if (ec)
            why += ": " + ec.message();
        co_return make_error(errc::invalid_argument, std::move(why), "url");
    }
    std::vector<asio::ip::tcp::endpoint> out;
    for (const auto& r : results) {
        if (!allow_private && !is_public_address(r.endpoint().address()) &&
            !in_allowed_networks(r.endpoint().address(), allowed))
            co_return make_error(
                errc::invalid_argument,
                "The webhook host '" + t.host + "' resolves to " + r.endpoint().address().to_string() +
                    ", a loopback, private, link-local or reserved address; this installation "
                    "only delivers to public addresses",
                "url");
        out.push_back(r.endpoint());
    }
    co_return out;
}

} // namespace depot::server::webhooks
