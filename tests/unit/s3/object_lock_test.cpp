#include "s3/object_lock.hpp"

#include <doctest/doctest.h>

using namespace depot;
using namespace depot::s3;

namespace {

std::string config(std::string_view rule)
{
    return "<ObjectLockConfiguration "
           "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><ObjectLockEnabled>Enabled"
           "</ObjectLockEnabled>" +
           std::string(rule) + "</ObjectLockConfiguration>";
}

errc config_error(std::string_view body)
{
    auto r = parse_object_lock_configuration(body);
    REQUIRE_FALSE(r);
    return r.error().code;
}

time_point at(std::string_view iso)
{
    return parse_iso8601(iso).value();
}

} // namespace

TEST_CASE("ObjectLockConfiguration: Enabled, with or without one default retention")
{
    auto plain = parse_object_lock_configuration(config(""));
    REQUIRE(plain);
    CHECK_FALSE(plain->rule);
    auto days = parse_object_lock_configuration(
        config("<Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days> 30 </Days></DefaultRetention></Rule>"));
    REQUIRE(days);
    REQUIRE(days->rule);
    CHECK(days->rule->mode == retention_mode::governance);
    CHECK(days->rule->days == 30);
    CHECK(days->rule->years == 0);
    auto years = parse_object_lock_configuration(
        config("<Rule><DefaultRetention><Years>7</Years><Mode>COMPLIANCE</Mode></DefaultRetention></Rule>"));
    REQUIRE(years);
    CHECK(years->rule->mode == retention_mode::compliance);
    CHECK(years->rule->years == 7);
    // Round trip through the GetObjectLockConfiguration document.
    const auto xml = object_lock_configuration_xml(years->rule);
    CHECK(xml.find("<Mode>COMPLIANCE</Mode><Years>7</Years>") != std::string::npos);
    CHECK(parse_object_lock_configuration(xml).value().rule->years == 7);
    CHECK(object_lock_configuration_xml(std::nullopt).find("<Rule>") == std::string::npos);
}

TEST_CASE("ObjectLockConfiguration refuses what S3 refuses")
{
    CHECK(config_error("<ObjectLockConfiguration/>") == errc::malformed_xml);
    CHECK(config_error("<ObjectLockConfiguration><ObjectLockEnabled>Disabled</ObjectLockEnabled>"
                       "</ObjectLockConfiguration>") == errc::malformed_xml);
    CHECK(
        config_error("<ObjectLockConfiguration><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days>"
                     "</DefaultRetention></Rule></ObjectLockConfiguration>") == errc::malformed_xml);
    CHECK(config_error(config("<Rule/>")) == errc::malformed_xml);
    CHECK(config_error(config("<Rule><DefaultRetention><Days>1</Days></DefaultRetention></Rule>")) ==
          errc::malformed_xml);
    CHECK(config_error(config("<Rule><DefaultRetention><Mode>GOVERNANCE</Mode></DefaultRetention></Rule>")) ==
          errc::malformed_xml);
    CHECK(config_error(config("<Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days><Years>1</Years>"
                              "</DefaultRetention></Rule>")) == errc::malformed_xml);
    CHECK(config_error(config("<Rule><DefaultRetention><Mode>governance</Mode><Days>1</Days>"
                              "</DefaultRetention></Rule>")) == errc::malformed_xml);
    CHECK(config_error(config("<Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>x</Days>"
                              "</DefaultRetention></Rule>")) == errc::malformed_xml);
    CHECK(config_error(config("<Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>0</Days>"
                              "</DefaultRetention></Rule>")) == errc::invalid_argument);
    CHECK(config_error(config("<Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>-3</Days>"
                              "</DefaultRetention></Rule>")) == errc::invalid_argument);
    CHECK(config_error(config("<Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Years>101</Years>"
                              "</DefaultRetention></Rule>")) == errc::invalid_argument);
    CHECK(config_error(config("<Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>36501</Days>"
                              "</DefaultRetention></Rule>")) == errc::invalid_argument);
    CHECK(config_error("<Nope/>") == errc::malformed_xml);
    CHECK(config_error("<ObjectLockConfiguration>") == errc::malformed_xml);
}

TEST_CASE("Retention: mode and date both, or neither (removal)")
{
    auto r = parse_retention("<Retention><Mode>COMPLIANCE</Mode><RetainUntilDate>2030-01-02T03:04:05.678Z</"
                             "RetainUntilDate></Retention>");
    REQUIRE(r);
    REQUIRE(*r);
    CHECK((*r)->mode == retention_mode::compliance);
    CHECK((*r)->retain_until == at("2030-01-02T03:04:05.678Z"));
    CHECK(retention_xml(**r).find("<RetainUntilDate>2030-01-02T03:04:05.678Z</RetainUntilDate>") !=
          std::string::npos);
    auto removed = parse_retention("<Retention/>");
    REQUIRE(removed);
    CHECK_FALSE(*removed);
    for (auto body :
         {"<Retention><Mode>GOVERNANCE</Mode></Retention>",
          "<Retention><RetainUntilDate>2030-01-01T00:00:00Z</RetainUntilDate></Retention>",
          "<Retention><Mode>KEEP</Mode><RetainUntilDate>2030-01-01T00:00:00Z</RetainUntilDate></Retention>",
          "<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>2030-01-01</RetainUntilDate></Retention>",
          "<LegalHold/>"}) {
        CAPTURE(body);
        auto bad = parse_retention(body);
        REQUIRE_FALSE(bad);
        CHECK(bad.error().code == errc::malformed_xml);
    }
}

TEST_CASE("LegalHold: ON or OFF")
{
    CHECK(parse_legal_hold("<LegalHold><Status>ON</Status></LegalHold>").value());
    CHECK_FALSE(parse_legal_hold("<LegalHold><Status> OFF </Status></LegalHold>").value());
    CHECK(parse_legal_hold("<LegalHold><Status>on</Status></LegalHold>").error().code == errc::malformed_xml);
    CHECK(parse_legal_hold("<LegalHold/>").error().code == errc::malformed_xml);
    CHECK(legal_hold_xml(true).find("<Status>ON</Status>") != std::string::npos);
}

TEST_CASE("x-amz-object-lock-* headers of a write")
{
    const auto now = at("2026-01-01T00:00:00Z");
    auto none = parse_lock_headers({}, now);
    REQUIRE(none);
    CHECK_FALSE(none->any());
    auto both = parse_lock_headers({.mode = "GOVERNANCE", .retain_until = "2026-01-02T00:00:00Z"}, now);
    REQUIRE(both);
    CHECK(both->retention->mode == retention_mode::governance);
    CHECK_FALSE(both->legal_hold);
    auto hold = parse_lock_headers({.legal_hold = "OFF"}, now);
    REQUIRE(hold);
    CHECK(hold->legal_hold == false);
    CHECK_FALSE(hold->retention);

    auto code = [&](lock_headers h) { return parse_lock_headers(h, now).error().code; };
    CHECK(code({.mode = "GOVERNANCE"}) == errc::invalid_argument);
    CHECK(code({.retain_until = "2026-01-02T00:00:00Z"}) == errc::invalid_argument);
    CHECK(code({.mode = "governance", .retain_until = "2026-01-02T00:00:00Z"}) == errc::invalid_argument);
    CHECK(code({.mode = "COMPLIANCE", .retain_until = "2025-12-31T23:59:59Z"}) == errc::invalid_argument);
    CHECK(code({.mode = "COMPLIANCE", .retain_until = "2026-01-01T00:00:00Z"}) == errc::invalid_argument);
    CHECK(code({.mode = "COMPLIANCE", .retain_until = "tomorrow"}) == errc::invalid_argument);
    CHECK(code({.legal_hold = "on"}) == errc::invalid_argument);
    CHECK(parse_lock_headers({.mode = "GOVERNANCE", .retain_until = "2026-01-02T00:00:00Z"}, now)
              .value()
              .any());
}
