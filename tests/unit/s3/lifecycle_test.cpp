#include "s3/lifecycle.hpp"

#include <doctest/doctest.h>

using namespace depot;
using namespace depot::s3;

namespace {

const char* full = R"(<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Rule>
    <ID>checkpoints</ID>
    <Filter><And><Prefix>ckpt/</Prefix><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan>
      <ObjectSizeLessThan>1000</ObjectSizeLessThan></And></Filter>
    <Status>Enabled</Status>
    <Expiration><Days>7</Days></Expiration>
    <NoncurrentVersionExpiration><NoncurrentDays>3</NoncurrentDays>
      <NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration>
    <AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload>
  </Rule>
  <Rule>
    <ID>legacy</ID>
    <Prefix>logs/</Prefix>
    <Status>Disabled</Status>
    <Expiration><Date>2030-01-01T00:00:00Z</Date></Expiration>
  </Rule>
  <Rule>
    <Filter></Filter>
    <Status>Enabled</Status>
    <Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>
  </Rule>
</LifecycleConfiguration>)";

error error_of(std::string_view body)
{
    auto r = parse_lifecycle_configuration(body);
    REQUIRE_FALSE(r);
    return r.error();
}

errc lifecycle_code_of(std::string_view body)
{
    return error_of(body).code;
}

std::string rule_xml(std::string_view inner)
{
    return "<LifecycleConfiguration><Rule>" + std::string(inner) + "</Rule></LifecycleConfiguration>";
}

/// A rule with every other part valid.
std::string with(std::string_view filter, std::string_view actions, std::string_view status = "Enabled")
{
    return rule_xml("<ID>r</ID>" + std::string(filter) + "<Status>" + std::string(status) + "</Status>" +
                    std::string(actions));
}

const std::string days1 = "<Expiration><Days>1</Days></Expiration>";

} // namespace

TEST_CASE("a full configuration parses and re-serializes in the shape it was given")
{
    auto config = parse_lifecycle_configuration(full);
    REQUIRE(config);
    REQUIRE(config->rules.size() == 3);
    const auto& a = config->rules[0];
    CHECK(a.id == "checkpoints");
    CHECK(a.enabled);
    CHECK(a.filter.prefix == "ckpt/");
    CHECK(a.filter.size_greater_than == 10u);
    CHECK(a.filter.size_less_than == 1000u);
    CHECK(a.expiration_days == 7);
    CHECK(a.noncurrent_days == 3);
    CHECK(a.newer_noncurrent_versions == 2);
    CHECK(a.abort_days_after_initiation == 1);
    CHECK(a.filter.matches("ckpt/a", 11, {}));
    CHECK_FALSE(a.filter.matches("ckpt/a", 10, {}));
    CHECK_FALSE(a.filter.matches("ckpt/a", 1000, {}));
    CHECK_FALSE(a.filter.matches("other", 100, {}));
    const auto& b = config->rules[1];
    CHECK_FALSE(b.enabled);
    CHECK(b.filter.shape == lifecycle_filter::form::legacy_prefix);
    REQUIRE(b.expiration_date);
    CHECK(format_iso8601(*b.expiration_date) == "2030-01-01T00:00:00.000Z");
    const auto& c = config->rules[2];
    CHECK(c.id.size() == 32); // generated
    CHECK(c.expired_object_delete_marker == true);
    CHECK(c.filter.matches("anything", 0, {}));

    const auto xml = lifecycle_configuration_xml(*config);
    CHECK(xml.find("<Filter><And><Prefix>ckpt/</Prefix><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan>"
                   "<ObjectSizeLessThan>1000</ObjectSizeLessThan></And></Filter>") != std::string::npos);
    CHECK(xml.find("<ID>legacy</ID><Prefix>logs/</Prefix><Status>Disabled</Status>") != std::string::npos);
    CHECK(xml.find("<Date>2030-01-01T00:00:00.000Z</Date>") != std::string::npos);
    CHECK(xml.find("<Filter></Filter>") != std::string::npos);
    // What is stored parses back to the same configuration.
    auto again = parse_lifecycle_configuration(xml);
    REQUIRE(again);
    CHECK(lifecycle_configuration_xml(*again) == xml);
}

TEST_CASE("malformed configurations")
{
    CHECK(lifecycle_code_of("<LifecycleConfiguration/>") == errc::malformed_xml);
    CHECK(lifecycle_code_of("<Lifecycle><Rule/></Lifecycle>") == errc::malformed_xml);
    CHECK(lifecycle_code_of("not xml") == errc::malformed_xml);
    CHECK(lifecycle_code_of(with("<Filter/>", days1, "enabled")) == errc::malformed_xml);
    CHECK(lifecycle_code_of(rule_xml("<Filter/>" + days1)) == errc::malformed_xml);     // no Status
    CHECK(lifecycle_code_of(with("", days1)) == errc::malformed_xml);                   // no filter at all
    CHECK(lifecycle_code_of(with("<Prefix/><Filter/>", days1)) == errc::malformed_xml); // both
    CHECK(lifecycle_code_of(
              with("<Filter><Prefix>a</Prefix><ObjectSizeLessThan>5</ObjectSizeLessThan></Filter>",
                   days1)) == errc::malformed_xml);                                          // two predicates
    CHECK(lifecycle_code_of(with("<Filter><And/></Filter>", days1)) == errc::malformed_xml); // empty And
    CHECK(lifecycle_code_of(with("<Filter><Size>1</Size></Filter>", days1)) ==
          errc::malformed_xml); // unknown
    CHECK(lifecycle_code_of(with("<Filter/>", "<Expiration/>")) == errc::malformed_xml);
    CHECK(lifecycle_code_of(with("<Filter/>", "<Expiration><Days>1</Days><ExpiredObjectDeleteMarker>true"
                                              "</ExpiredObjectDeleteMarker></Expiration>")) ==
          errc::malformed_xml);
    CHECK(lifecycle_code_of(with("<Filter/>", "<Expiration><Days>x</Days></Expiration>")) ==
          errc::malformed_xml);
    CHECK(lifecycle_code_of(with("<Filter/>",
                                 "<Expiration><ExpiredObjectDeleteMarker>yes</ExpiredObjectDeleteMarker>"
                                 "</Expiration>")) == errc::malformed_xml);
    CHECK(lifecycle_code_of(with("<Filter/>", "<NoncurrentVersionExpiration/>")) == errc::malformed_xml);
    std::string many = "<LifecycleConfiguration>";
    for (int i = 0; i < 1001; ++i)
        many +=
            "<Rule><ID>r" + std::to_string(i) + "</ID><Filter/><Status>Enabled</Status>" + days1 + "</Rule>";
    CHECK(lifecycle_code_of(many + "</LifecycleConfiguration>") == errc::malformed_xml);
}

TEST_CASE("S3's InvalidArgument and InvalidRequest answers")
{
    auto e = error_of(with("<Filter/>", "<Expiration><Days>0</Days></Expiration>"));
    CHECK(e.code == errc::invalid_argument);
    CHECK(e.message == "'Days' for Expiration action must be a positive integer");
    CHECK(lifecycle_code_of(with("<Filter/>", "<Expiration><Days>-3</Days></Expiration>")) ==
          errc::invalid_argument);
    e = error_of(with("<Filter/>", "<Expiration><Date>2030-01-01T12:00:00Z</Date></Expiration>"));
    CHECK(e.code == errc::invalid_argument);
    CHECK(e.message == "'Date' must be at midnight GMT");
    e = error_of(with("<Filter/>", "<NoncurrentVersionExpiration><NoncurrentDays>0</NoncurrentDays>"
                                   "</NoncurrentVersionExpiration>"));
    CHECK(e.code == errc::invalid_argument);
    CHECK(e.message == "'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer");
    CHECK(
        lifecycle_code_of(with("<Filter/>", "<NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays>"
                                            "<NewerNoncurrentVersions>101</NewerNoncurrentVersions>"
                                            "</NoncurrentVersionExpiration>")) == errc::invalid_argument);
    CHECK(lifecycle_code_of(with("<Filter/>", "<AbortIncompleteMultipartUpload><DaysAfterInitiation>0"
                                              "</DaysAfterInitiation></AbortIncompleteMultipartUpload>")) ==
          errc::invalid_argument);
    e = error_of(rule_xml("<ID>" + std::string(256, 'x') + "</ID><Filter/><Status>Enabled</Status>" + days1));
    CHECK(e.code == errc::invalid_argument);
    CHECK(e.message == "ID length should not exceed allowed limit of 255");
    CHECK(parse_lifecycle_configuration(
        rule_xml("<ID>" + std::string(255, 'x') + "</ID><Filter/><Status>Enabled</Status>" + days1)));
    const std::string twice = "<Rule><ID>same</ID><Filter/><Status>Enabled</Status>" + days1 + "</Rule>";
    e = error_of("<LifecycleConfiguration>" + twice + twice + "</LifecycleConfiguration>");
    CHECK(e.code == errc::invalid_argument);
    CHECK(e.message == "Rule ID must be unique. Found same ID for more than one rule");
    CHECK(lifecycle_code_of(
              with("<Filter><And><ObjectSizeGreaterThan>5</ObjectSizeGreaterThan><ObjectSizeLessThan>5"
                   "</ObjectSizeLessThan></And></Filter>",
                   days1)) == errc::invalid_argument);
    e = error_of(with("<Filter/>", ""));
    CHECK(e.code == errc::invalid_request);
    CHECK(e.message == "At least one action needs to be specified in a rule");
    const std::string tag = "<Tag><Key>k</Key><Value>v</Value></Tag>";
    CHECK(
        lifecycle_code_of(with("<Filter>" + tag + "</Filter>",
                               "<AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation>"
                               "</AbortIncompleteMultipartUpload>")) == errc::invalid_request);
}

TEST_CASE("transitions are not implemented")
{
    CHECK(
        lifecycle_code_of(with("<Filter/>", "<Transition><Days>30</Days><StorageClass>GLACIER</StorageClass>"
                                            "</Transition>")) == errc::not_implemented);
    CHECK(lifecycle_code_of(with("<Filter/>",
                                 "<NoncurrentVersionTransition><NoncurrentDays>30</NoncurrentDays>"
                                 "<StorageClass>GLACIER</StorageClass></NoncurrentVersionTransition>")) ==
          errc::not_implemented);
}

TEST_CASE("tag filters: one Tag, or several in And with a prefix and sizes; all must match")
{
    auto one = parse_lifecycle_configuration(
        with("<Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter>", days1));
    REQUIRE(one);
    const auto& f = one->rules[0].filter;
    REQUIRE(f.tags.size() == 1);
    CHECK(f.tags[0].key == "k");
    CHECK(f.tags[0].value == "v");
    CHECK(f.shape == lifecycle_filter::form::filter);
    CHECK(f.matches("any", 1, {{.key = "x", .value = "1"}, {.key = "k", .value = "v"}}));
    CHECK_FALSE(f.matches("any", 1, {{.key = "k", .value = "w"}}));
    CHECK_FALSE(f.matches("any", 1, {{.key = "v", .value = "k"}})); // key and value are not interchangeable
    CHECK_FALSE(f.matches("any", 1, {}));
    CHECK(lifecycle_configuration_xml(*one).find(
              "<Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter>") != std::string::npos);

    auto both = parse_lifecycle_configuration(
        with("<Filter><And><Prefix>ckpt/</Prefix><Tag><Key>a</Key><Value>1</Value></Tag>"
             "<Tag><Key>b</Key><Value></Value></Tag><ObjectSizeGreaterThan>3</ObjectSizeGreaterThan></And></"
             "Filter>",
             days1));
    REQUIRE(both);
    const auto& g = both->rules[0].filter;
    REQUIRE(g.tags.size() == 2);
    CHECK(g.tags[1].key == "b");
    CHECK(g.tags[1].value.empty());
    const std::vector<tag> ab{{.key = "b", .value = ""}, {.key = "a", .value = "1"}};
    CHECK(g.matches("ckpt/x", 4, ab));
    CHECK_FALSE(g.matches("ckpt/x", 3, ab));
    CHECK_FALSE(g.matches("other", 4, ab));
    CHECK_FALSE(g.matches("ckpt/x", 4, {{.key = "a", .value = "1"}}));
    const auto xml = lifecycle_configuration_xml(*both);
    CHECK(
        xml.find("<Filter><And><Prefix>ckpt/</Prefix><Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>b</Key>"
                 "<Value></Value></Tag><ObjectSizeGreaterThan>3</ObjectSizeGreaterThan></And></Filter>") !=
        std::string::npos);
    auto again = parse_lifecycle_configuration(xml);
    REQUIRE(again);
    CHECK(lifecycle_configuration_xml(*again) == xml);
}

TEST_CASE("tag filters: S3's refusals")
{
    const std::string tag = "<Tag><Key>k</Key><Value>v</Value></Tag>";
    // A Tag beside another predicate outside And; a Tag without Key or Value.
    CHECK(lifecycle_code_of(with("<Filter><Prefix>a</Prefix>" + tag + "</Filter>", days1)) ==
          errc::malformed_xml);
    CHECK(lifecycle_code_of(with("<Filter><Tag><Key>k</Key></Tag></Filter>", days1)) == errc::malformed_xml);
    CHECK(lifecycle_code_of(with("<Filter><Tag><Value>v</Value></Tag></Filter>", days1)) ==
          errc::malformed_xml);
    auto e = error_of(
        with("<Filter><And>" + tag + "<Tag><Key>k</Key><Value>w</Value></Tag></And></Filter>", days1));
    CHECK(e.code == errc::invalid_request);
    CHECK(e.message == "Duplicate Tag Keys are not allowed.");
    e = error_of(with("<Filter><Tag><Key></Key><Value>v</Value></Tag></Filter>", days1));
    CHECK(e.code == errc::invalid_tag);
    CHECK(e.message == "The TagKey you have provided is invalid");
    CHECK(lifecycle_code_of(
              with("<Filter><Tag><Key>" + std::string(129, 'k') + "</Key><Value>v</Value></Tag></Filter>",
                   days1)) == errc::invalid_tag);
    CHECK(lifecycle_code_of(
              with("<Filter><Tag><Key>k</Key><Value>" + std::string(257, 'v') + "</Value></Tag></Filter>",
                   days1)) == errc::invalid_tag);
    CHECK(parse_lifecycle_configuration(with("<Filter><Tag><Key>" + std::string(128, 'k') + "</Key><Value>" +
                                                 std::string(256, 'v') + "</Value></Tag></Filter>",
                                             days1)));
    e = error_of(with("<Filter>" + tag + "</Filter>",
                      "<AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation>"
                      "</AbortIncompleteMultipartUpload>"));
    CHECK(e.code == errc::invalid_request);
    CHECK(e.message == "AbortIncompleteMultipartUpload cannot be specified with Tags.");
    e = error_of(
        with("<Filter><And><Prefix>p</Prefix>" + tag + "</And></Filter>",
             "<Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>"));
    CHECK(e.code == errc::invalid_request);
    CHECK(e.message == "ExpiredObjectDeleteMarker cannot be specified with Tags.");
}

TEST_CASE("lifecycle days: midnight UTC for real days, exact for a testing day")
{
    const auto now = *parse_iso8601("2026-05-10T15:30:00Z");
    // Written 2026-05-08T10:00 with Days=1: due at 2026-05-10T00:00 (start + 1 day rounded up to midnight).
    const auto cutoff = lifecycle_cutoff(now, 1, std::chrono::seconds(86400));
    CHECK(format_iso8601(cutoff) == "2026-05-09T00:00:00.000Z");
    CHECK(*parse_iso8601("2026-05-08T10:00:00Z") <= cutoff);
    CHECK(*parse_iso8601("2026-05-09T00:00:00Z") <= cutoff);       // due exactly at 2026-05-10T00:00
    CHECK_FALSE(*parse_iso8601("2026-05-09T00:00:01Z") <= cutoff); // due 2026-05-11
    CHECK(lifecycle_cutoff(now, 3, std::chrono::seconds(2)) == now - std::chrono::seconds(6));
}
