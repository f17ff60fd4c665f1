// The REST API's JSON bodies (server/api/http_api.hpp): the media type they must be declared with, and the
// one parse every handler's body goes through.
#include "server/api/http_api.hpp"

#include <doctest/doctest.h>
#include <string>

using namespace depot;
using namespace depot::server::api;

TEST_CASE("a JSON body is declared as application/json, parameters allowed")
{
    for (const char* ok : {"application/json", "Application/JSON", "application/json; charset=utf-8",
                           "application/json;charset=UTF-8", " application/json ", "application/json ;x=y"}) {
        CAPTURE(ok);
        CHECK(is_json_media_type(ok));
    }
    // What a cross-site form can send without a preflight, and near misses.
    for (const char* bad : {"text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded",
                            "multipart/form-data; boundary=x", "", "application/jsonx", "application/json5",
                            "application/problem+json", "application/merge-patch+json", "text/json",
                            "application/", "json", "application/json,text/plain"}) {
        CAPTURE(bad);
        CHECK_FALSE(is_json_media_type(bad));
    }
}

TEST_CASE("the login CSRF body is refused: a member named twice, at any depth")
{
    // The attacker's text/plain form: name `{"expires_in":86400,"token":"` and value `","token":"dpt_..."}`
    // join into this; Boost.JSON alone keeps the last "token".
    auto attack = parse_json_object(R"({"expires_in":86400,"token":"=","token":"dpt_ATTACKER"})");
    REQUIRE_FALSE(attack);
    CHECK(attack.error().code == errc::invalid_argument);
    CHECK(attack.error().message.find("'token' twice") != std::string::npos);

    for (const char* twice : {R"({"a":1,"a":1})", R"({"a":1,"b":{"c":1,"c":2}})", R"({"x":[{"k":1,"k":1}]})",
                              R"({"a":1,"\u0061":2})", R"({"":1,"":2})"}) {
        CAPTURE(twice);
        auto r = parse_json_object(twice);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::invalid_argument);
        CHECK(r.error().message.find("twice") != std::string::npos);
    }
    // A long name is not echoed.
    const std::string long_name(100, 'n');
    auto r = parse_json_object("{\"" + long_name + "\":1,\"" + long_name + "\":2}");
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find(long_name) == std::string::npos);
}

TEST_CASE("the same name in different objects, and ordinary bodies, parse")
{
    auto r = parse_json_object(R"({"a":{"k":1},"b":{"k":2},"c":[{"k":1},{"k":2}],"k":{"a":1}})");
    REQUIRE(r);
    CHECK(r->size() == 4);
    auto s = parse_json_object(R"({"token":"dpt_x","expires_in":600})");
    REQUIRE(s);
    CHECK(s->at("token").as_string() == "dpt_x");
    CHECK(parse_json_object("{}"));
}

TEST_CASE("bodies that are no JSON object, or hold NUL, are refused")
{
    for (const char* bad :
         {"", "{", "[1]", "\"s\"", "1", "{\"a\":\"\\u0000\"}", "{\"\\u0000\":1}", "{} {}"}) {
        CAPTURE(bad);
        auto r = parse_json_object(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::invalid_argument);
    }
}

TEST_CASE("a number beyond a double's range is refused, not stored as infinity")
{
    // The attacker's body: {"metrics":{"x":1e400}} made createVersion a 500.
    for (const char* bad : {R"({"metrics":{"x":1e400}})", R"({"a":[-1e309]})", R"({"a":1E+999})"}) {
        CAPTURE(bad);
        auto r = parse_json_object(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::invalid_argument);
    }
    CHECK(parse_json_object(R"({"a":1.7976931348623157e308,"b":-2.2e-308,"c":1e-400})"));
}
