/// \file
/// Fuzzes the REST API's JSON request handling that does not need a database: the body parsed as
/// read_json_object does (Boost.JSON, an object required), the credential scope as the credential handlers
/// pass it on (src/server/api/access.cpp: the "scope" member serialized, then auth::parse_scope and
/// scope_json), and the webhook "url" member through webhooks::parse_target. The raw input also goes to
/// parse_scope directly, as a stored scope would.
///
/// Invariants: an accepted scope is consistent (prefix needs bucket, alias needs model and is read-only,
/// never bucket and model together) and its canonical JSON parses back to the same scope; an accepted
/// webhook URL has a host, a port within 1..65535 and a target starting with '/'; an IPv4 address and its
/// IPv4-mapped IPv6 form are judged alike by is_public_address.

#include "auth/scope.hpp"
#include "check.hpp"
#include "server/webhooks/target.hpp"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using namespace depot;
namespace json = boost::json;

bool same(const auth::access_scope& a, const auth::access_scope& b)
{
    return a.read_only == b.read_only && a.bucket == b.bucket && a.prefix == b.prefix && a.team == b.team &&
           a.model == b.model && a.alias == b.alias;
}

void check_scope(std::string_view text)
{
    auto s = auth::parse_scope(text);
    if (!s)
        return;
    FUZZ_CHECK(s->prefix.empty() || !s->bucket.empty());
    FUZZ_CHECK(s->alias.empty() || (!s->model.empty() && s->read_only));
    FUZZ_CHECK(s->model.empty() || s->bucket.empty());
    FUZZ_CHECK(s->model.empty() == s->team.empty());
    auto canonical = auth::scope_json(*s);
    FUZZ_CHECK(canonical.empty() == s->unrestricted());
    auto again = auth::parse_scope(canonical);
    FUZZ_CHECK(again && same(*again, *s));
    FUZZ_CHECK(auth::scope_json(*again) == canonical);
}

void check_address(std::string_view host)
{
    boost::system::error_code ec;
    auto a = boost::asio::ip::make_address(std::string(host), ec);
    if (ec)
        return;
    bool verdict = server::webhooks::is_public_address(a);
    if (a.is_v4()) {
        auto mapped = boost::asio::ip::make_address_v6(boost::asio::ip::v4_mapped, a.to_v4());
        FUZZ_CHECK(server::webhooks::is_public_address(mapped) == verdict);
    }
}

void check_url(std::string_view url)
{
    auto t = server::webhooks::parse_target(url);
    if (!t)
        return;
    FUZZ_CHECK(!t->host.empty());
    // Leading zeros are allowed ("0080"); the number itself must be a port.
    FUZZ_CHECK(!t->port.empty());
    unsigned long port = 0;
    for (char c : t->port) {
        FUZZ_CHECK(c >= '0' && c <= '9');
        port = std::min(port * 10 + static_cast<unsigned long>(c - '0'), 1000000ul);
    }
    FUZZ_CHECK(port >= 1 && port <= 65535);
    FUZZ_CHECK(t->target.starts_with('/'));
    check_address(t->host);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::string_view in(reinterpret_cast<const char*>(data), size);
    check_scope(in);

    boost::system::error_code ec;
    auto value = json::parse(in, ec);
    if (ec || !value.is_object())
        return 0;
    const auto& body = value.as_object();
    if (auto it = body.find("scope"); it != body.end() && it->value().is_object())
        check_scope(json::serialize(it->value()));
    if (auto it = body.find("url"); it != body.end() && it->value().is_string())
        check_url(std::string_view(it->value().as_string()));
    return 0;
}
