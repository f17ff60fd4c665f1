// The bearer token of /metrics (server/metrics_endpoint.hpp): what reads the metrics once a token is set,
// and which tokens depotd refuses to start with.
#include "server/metrics_endpoint.hpp"

#include <doctest/doctest.h>
#include <stdexcept>
#include <string>

using namespace depot;
using namespace depot::server;

TEST_CASE("with a token, only Bearer and that exact token read /metrics")
{
    const std::string token = "0123456789abcdef0123";
    CHECK(metrics_authorized(token, "Bearer 0123456789abcdef0123"));
    CHECK(metrics_authorized(token, "bearer 0123456789abcdef0123 "));
    for (const char* bad :
         {"", "Bearer", "Bearer ", "Bearer 0123456789abcdef012", "Bearer 0123456789abcdef01234",
          "Basic 0123456789abcdef0123", "0123456789abcdef0123", "Bearer x0123456789abcdef0123",
          "AWS4-HMAC-SHA256 Credential=0123456789abcdef0123"}) {
        CAPTURE(bad);
        CHECK_FALSE(metrics_authorized(token, bad));
    }
    CHECK_FALSE(metrics_authorized(token, std::nullopt));
    // No token: open, as /healthz.
    CHECK(metrics_authorized("", std::nullopt));
}

TEST_CASE("depotd refuses a metrics token that would not keep anyone out")
{
    config::options o;
    CHECK(load_metrics_token(o).empty());
    o.metrics_token = "  0123456789abcdef\n";
    CHECK(load_metrics_token(o) == "0123456789abcdef");
    for (const char* bad :
         {"short", "0123456789abcde", "0123456789 abcdef0123", "0123456789abcdef\x01", " \n"}) {
        CAPTURE(bad);
        o.metrics_token = bad;
        CHECK_THROWS_AS(load_metrics_token(o), std::runtime_error);
    }
    o.metrics_token.clear();
    o.metrics_token_file = "/nonexistent/metrics-token";
    CHECK_THROWS_AS(load_metrics_token(o), std::runtime_error);
}
