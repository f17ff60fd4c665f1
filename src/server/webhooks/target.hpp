#pragma once
/// \file
/// Webhook targets: which URLs a subscription may name and which addresses a delivery may connect to.
///
/// A target is an absolute http or https URL without credentials or fragment. Its host must resolve only
/// to public addresses: loopback, private (RFC 1918, unique-local), link-local, carrier-grade NAT,
/// multicast and reserved ranges are refused unless the installation allows private targets
/// (--webhook-allow-private), so a team cannot make depotd probe its own network. The check runs when the
/// subscription is saved and again before every attempt, against the addresses the attempt then connects to
/// (a DNS answer that changed meanwhile cannot smuggle a private address in).

#include "common/networks.hpp"
#include "common/result.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace depot::server::webhooks {

namespace asio = boost::asio;

struct webhook_target
{
    bool tls = false;
    std::string host;   ///< without brackets for IPv6 literals
    std::string port;   ///< explicit or the scheme's default
    std::string target; ///< path and query, at least "/"
};

/// Parses and checks the form of a target URL. invalid_argument (field "url") saying what is wrong.
result<webhook_target> parse_target(std::string_view url);

/// False for loopback, private, link-local, CGNAT, multicast, unspecified and reserved addresses. An IPv6
/// address that embeds an IPv4 address (IPv4-mapped and -compatible, NAT64 64:ff9b::/96 and 64:ff9b:1::/48,
/// 6to4 2002::/16, Teredo 2001::/32 with its server and its inverted client address) is public only when
/// every IPv4 address it embeds is.
bool is_public_address(const asio::ip::address& a);

/// Resolves the target's host; invalid_argument (field "url") when it does not resolve or, unless
/// `allow_private`, resolves to any address that is neither public nor in `allowed`.
asio::awaitable<result<std::vector<asio::ip::tcp::endpoint>>>
resolve_target(const webhook_target& t, bool allow_private, const allowed_networks& allowed = {});

} // namespace depot::server::webhooks
