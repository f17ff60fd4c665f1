#include "common/networks.hpp"

#include <doctest/doctest.h>

using namespace depot;
namespace asio = boost::asio;

TEST_CASE("--webhook-allow-cidr admits the addresses of its networks and no other")
{
    auto nets = parse_allowed_networks(" 10.42.0.0/16, fd00:42::/48 ,192.168.7.7/32");
    REQUIRE(nets);
    CHECK(nets->size() == 3);
    for (const char* in : {"10.42.0.0", "10.42.255.255", "::ffff:10.42.1.2", "fd00:42::1",
                           "fd00:42:0:ffff::9", "192.168.7.7"}) {
        CAPTURE(in);
        CHECK(in_allowed_networks(asio::ip::make_address(in), *nets));
    }
    for (const char* out : {"10.43.0.0", "10.41.255.255", "127.0.0.1", "fd00:43::1", "192.168.7.8", "::1",
                            "::a2a:1", "169.254.169.254"}) {
        CAPTURE(out);
        CHECK_FALSE(in_allowed_networks(asio::ip::make_address(out), *nets));
    }
    auto all_v4 = parse_allowed_networks("0.0.0.0/0");
    REQUIRE(all_v4);
    CHECK(in_allowed_networks(asio::ip::make_address("127.0.0.1"), *all_v4));
    CHECK_FALSE(in_allowed_networks(asio::ip::make_address("::1"), *all_v4)); // IPv4 only, not all of IPv6
    auto empty = parse_allowed_networks("");
    REQUIRE(empty);
    CHECK(empty->empty());
    CHECK_FALSE(in_allowed_networks(asio::ip::make_address("10.0.0.1"), *empty));
}

TEST_CASE("--webhook-allow-cidr refuses what is not a list of network addresses")
{
    for (const char* bad :
         {"10.0.0.0", "10.0.0.1/8", "10.0.0.0/33", "fd00::1/8", "fd00::/129", "x/8", "10.0.0.0/8,",
          ",10.0.0.0/8", "10.0.0.0/8,,fd00::/8", "10.0.0.0/-1", "10.0.0.0/8x", " , "}) {
        CAPTURE(bad);
        auto r = parse_allowed_networks(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::invalid_argument);
    }
}
