#include "common/networks.hpp"

#include <charconv>
#include <string>

namespace depot {

namespace asio = boost::asio;

result<allowed_networks> parse_allowed_networks(std::string_view text)
{
    allowed_networks out;
    if (text.find_first_not_of(' ') == std::string_view::npos)
        return out;
    for (bool more = true; more;) { // every item counts: "a,,b" and "a," are mistakes, not lists of two
        const auto comma = text.find(',');
        more = comma != std::string_view::npos;
        std::string item(text.substr(0, comma));
        if (more)
            text.remove_prefix(comma + 1);
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        const auto slash = item.find('/');
        boost::system::error_code ec;
        const auto address =
            asio::ip::make_address(item.substr(0, slash == std::string::npos ? item.size() : slash), ec);
        unsigned bits = 0;
        const auto digits =
            slash == std::string::npos ? std::string_view{} : std::string_view(item).substr(slash + 1);
        auto [end, parse_ec] = std::from_chars(digits.data(), digits.data() + digits.size(), bits);
        const unsigned max_bits = address.is_v4() ? 32 : 128;
        if (ec || digits.empty() || parse_ec != std::errc() || end != digits.data() + digits.size() ||
            bits > max_bits)
            return make_error(errc::invalid_argument, "'" + item + "' is not a CIDR network (ADDRESS/BITS)");
        const auto v6 = address.is_v4() ? asio::ip::make_address_v6(asio::ip::v4_mapped, address.to_v4())
                                        : address.to_v6();
        const asio::ip::network_v6 net(v6, static_cast<unsigned short>(address.is_v4() ? bits + 96 : bits));
        if (net.canonical() != net)
            return make_error(errc::invalid_argument,
                              "'" + item + "' has bits set after the prefix: not a network address");
        out.push_back(net);
    }
    return out;
}

bool in_allowed_networks(const asio::ip::address& a, const allowed_networks& nets)
{
    const auto v6 = a.is_v4() ? asio::ip::make_address_v6(asio::ip::v4_mapped, a.to_v4()) : a.to_v6();
    for (const auto& net : nets)
        if (asio::ip::network_v6(v6, net.prefix_length()).canonical() == net)
            return true;
    return false;
}

} // namespace depot
