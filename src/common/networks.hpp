#pragma once
/// \file
/// Lists of IP networks an installation configures (--webhook-allow-cidr): parsed where the option enters,
/// matched wherever an address is judged.

#include "common/result.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/network_v6.hpp>
#include <string_view>
#include <vector>

namespace depot {

/// Networks whose addresses a target may resolve to although they are not public (--webhook-allow-cidr):
/// the cluster network of an installation whose receivers run next to it, without opening every private
/// range. IPv4 networks are kept as their IPv4-mapped IPv6 form (::ffff:a.b.c.d/96+n).
using allowed_networks = std::vector<boost::asio::ip::network_v6>;

/// Parses a comma-separated list of CIDR networks ("10.42.0.0/16,fd00:42::/48"); spaces around items are
/// ignored, an empty text is an empty list. invalid_argument naming the bad item; host bits must be zero.
result<allowed_networks> parse_allowed_networks(std::string_view text);

/// True when `a` (or the IPv4 address it maps) lies in one of `nets`.
bool in_allowed_networks(const boost::asio::ip::address& a, const allowed_networks& nets);

} // namespace depot
