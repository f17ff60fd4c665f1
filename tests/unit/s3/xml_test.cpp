#include "s3/xml.hpp"

#include <doctest/doctest.h>

using namespace depot;
using namespace depot::s3;
using namespace std::string_literals;

TEST_CASE("xml_escape escapes the five specials and control characters")
{
    CHECK(xml_escape("plain text/key.txt") == "plain text/key.txt");
    CHECK(xml_escape(R"(a&b<c>d"e'f)") == "a&amp;b&lt;c&gt;d&quot;e&apos;f");
    CHECK(xml_escape("tab\tnl\ncr\r\x01\x1f") == "tab&#x9;nl&#xA;cr&#xD;&#x1;&#x1F;");
    CHECK(xml_escape(std::string_view("a\0b", 3)) == "a\xEF\xBF\xBD"
                                                     "b");
    CHECK(xml_escape("\x7f") == "\x7f");
}

TEST_CASE("xml_escape keeps valid UTF-8 and replaces invalid bytes")
{
    CHECK(xml_escape("caf\xC3\xA9 \xF0\x9F\x98\x80") == "caf\xC3\xA9 \xF0\x9F\x98\x80");
    CHECK(xml_escape("a\xFF"
                     "b") == "a\xEF\xBF\xBD"
                             "b");
    CHECK(xml_escape("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");                 // overlong '/'
    CHECK(xml_escape("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"); // surrogate
    CHECK(xml_escape("\xE2\x82") == "\xEF\xBF\xBD\xEF\xBF\xBD");                 // truncated
}

TEST_CASE("xml_writer nests elements, writes numbers and booleans, and closes what is open")
{
    xml_writer w;
    w.open("Root", s3_xmlns);
    w.element("Name", "a<b");
    w.element("Size", std::uint64_t{18446744073709551615ULL});
    w.element("Neg", -5);
    w.element("Flag", true);
    w.element_if("Skipped", "");
    w.open("Inner").element("X", std::string("y")).close();
    w.open("Unclosed");
    CHECK(std::move(w).finish() ==
          R"(<?xml version="1.0" encoding="UTF-8"?><Root xmlns="http://s3.amazonaws.com/doc/2006-03-01/">)"
          R"(<Name>a&lt;b</Name><Size>18446744073709551615</Size><Neg>-5</Neg><Flag>true</Flag>)"
          R"(<Inner><X>y</X></Inner><Unclosed></Unclosed></Root>)");
}

TEST_CASE("CreateBucketConfiguration allows an empty body and reads LocationConstraint")
{
    CHECK(parse_create_bucket_configuration("").value().location_constraint.empty());
    CHECK(parse_create_bucket_configuration("  \n").value().location_constraint.empty());
    auto c = parse_create_bucket_configuration(
        R"(<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
             <LocationConstraint> eu-west-1 </LocationConstraint>
           </CreateBucketConfiguration>)");
    CHECK(c.value().location_constraint == "eu-west-1");
    CHECK(parse_create_bucket_configuration("<CreateBucketConfiguration/>")
              .value()
              .location_constraint.empty());
    CHECK(parse_create_bucket_configuration("<Other/>").error().code == errc::malformed_xml);
    CHECK(parse_create_bucket_configuration("<CreateBucketConfiguration>").error().code ==
          errc::malformed_xml);
}

TEST_CASE("Delete parses keys verbatim, version ids and Quiet")
{
    auto d = parse_delete_objects(R"(<?xml version="1.0" encoding="UTF-8"?>
        <Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
          <Quiet>true</Quiet>
          <Object><Key>a&amp;b</Key></Object>
          <Object><Key>  spaced  </Key><VersionId>v1</VersionId></Object>
          <Object><Key><![CDATA[<cdata>]]></Key></Object>
          <Object><Key>caf&#xE9;&#13;</Key></Object>
        </Delete>)");
    REQUIRE(d);
    CHECK(d->quiet);
    REQUIRE(d->objects.size() == 4);
    CHECK(d->objects[0].key == "a&b");
    CHECK_FALSE(d->objects[0].version_id.has_value());
    CHECK(d->objects[1].key == "  spaced  ");
    CHECK(d->objects[1].version_id == "v1");
    CHECK(d->objects[2].key == "<cdata>");
    CHECK(d->objects[3].key == "caf\xC3\xA9\r");
}

TEST_CASE("Delete tolerates a prefixed namespace and defaults Quiet to false")
{
    auto d = parse_delete_objects(
        R"(<s3:Delete xmlns:s3="http://s3.amazonaws.com/doc/2006-03-01/"><s3:Object><s3:Key>k</s3:Key></s3:Object></s3:Delete>)");
    REQUIRE(d);
    CHECK_FALSE(d->quiet);
    CHECK(d->objects.at(0).key == "k");
}

TEST_CASE("Delete rejects bad XML, no objects, a missing key, a bad Quiet and more than 1000 keys")
{
    CHECK(parse_delete_objects("").error().code == errc::malformed_xml);
    CHECK(parse_delete_objects("<Delete>").error().code == errc::malformed_xml);
    CHECK(parse_delete_objects("<Delete></Delete>").error().code == errc::malformed_xml);
    CHECK(parse_delete_objects("<Delete><Object></Object></Delete>").error().code == errc::malformed_xml);
    CHECK(parse_delete_objects("<Delete><Quiet>yes</Quiet><Object><Key>k</Key></Object></Delete>")
              .error()
              .code == errc::malformed_xml);
    CHECK(parse_delete_objects("<Delete><Object><Key>k</Key></Object></Delete><Delete/>").error().code ==
          errc::malformed_xml);
    CHECK(parse_delete_objects("<NotDelete><Object><Key>k</Key></Object></NotDelete>").error().code ==
          errc::malformed_xml);

    std::string body = "<Delete>";
    for (int i = 0; i < 1000; ++i)
        body += "<Object><Key>k" + std::to_string(i) + "</Key></Object>";
    CHECK(parse_delete_objects(body + "</Delete>").value().objects.size() == 1000);
    CHECK(parse_delete_objects(body + "<Object><Key>x</Key></Object></Delete>").error().code ==
          errc::malformed_xml);
}

TEST_CASE("A NUL character, raw or by reference, makes a request document malformed")
{
    // The attacker's body: `&#0;` decoded into a NUL would make the key read as `important.db`.
    // pugixml wraps a reference past 32 bits (`&#4294967296;` decodes to 0), so every reference to no XML
    // character is refused: past U+10FFFF and the surrogates too.
    for (const std::string ref : {"&#0;", "&#00;", "&#x0;", "&#X000;", "&#4294967296;", "&#x100000000;",
                                  "&#1114112;", "&#x110000;", "&#xD800;", "&#57343;"})
        CHECK(parse_delete_objects("<Delete><Object><Key>important.db" + ref + ".tmp</Key></Object></Delete>")
                  .error()
                  .code == errc::malformed_xml);
    CHECK(parse_delete_objects("<Delete><Object><Key>a\0b</Key></Object></Delete>"s).error().code ==
          errc::malformed_xml);
    CHECK(parse_tagging("<Tagging><TagSet><Tag><Key>k</Key><Value>v&#0;w</Value></Tag></TagSet></Tagging>")
              .error()
              .code == errc::malformed_xml);
    // Other references stay what they are: `&#48;` is "0", `&#10;` a line feed, `&#x10FFFF;` the last one.
    CHECK(parse_delete_objects("<Delete><Object><Key>a&#x10FFFF;</Key></Object></Delete>"));
    const auto d = parse_delete_objects("<Delete><Object><Key>a&#48;&#10;&#x30;</Key></Object></Delete>");
    REQUIRE(d);
    CHECK(d->objects.at(0).key == "a0\n0");
}

TEST_CASE("A single element given twice makes a request document malformed; lists may repeat")
{
    CHECK(parse_delete_objects("<Delete><Object><Key>a</Key><Key>b</Key></Object></Delete>").error().code ==
          errc::malformed_xml);
    CHECK(parse_delete_objects("<Delete><Quiet>true</Quiet><Quiet>false</Quiet><Object><Key>a</Key></Object>"
                               "</Delete>")
              .error()
              .code == errc::malformed_xml);
    CHECK(parse_versioning_configuration("<VersioningConfiguration><Status>Enabled</Status>"
                                         "<Status>Suspended</Status></VersioningConfiguration>")
              .error()
              .code == errc::malformed_xml);
    const auto two = parse_delete_objects("<Delete><Object><Key>a</Key></Object><Object><Key>b</Key></Object>"
                                          "</Delete>");
    REQUIRE(two);
    CHECK(two->objects.size() == 2);
}

TEST_CASE("CompleteMultipartUpload reads part numbers, unquoted ETags and checksums")
{
    auto parts = parse_complete_multipart_upload(
        R"(<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
        <Part><PartNumber>1</PartNumber><ETag>"abc"</ETag><ChecksumCRC32>AAAAAA==</ChecksumCRC32></Part>
        <Part><ETag>&quot;def&quot;</ETag><PartNumber> 3 </PartNumber><ChecksumSHA256>x</ChecksumSHA256></Part>
        <Part><PartNumber>10000</PartNumber><ETag>ghi</ETag></Part>
      </CompleteMultipartUpload>)");
    REQUIRE(parts);
    REQUIRE(parts->size() == 3);
    CHECK((*parts)[0].part_number == 1);
    CHECK((*parts)[0].etag == "abc");
    CHECK((*parts)[0].checksum.crc32 == "AAAAAA==");
    CHECK((*parts)[1].part_number == 3);
    CHECK((*parts)[1].etag == "def");
    CHECK((*parts)[1].checksum.sha256 == "x");
    CHECK((*parts)[2].etag == "ghi");
}

TEST_CASE("CompleteMultipartUpload rejects missing fields, bad numbers and out-of-order parts")
{
    auto code = [](std::string_view body) { return parse_complete_multipart_upload(body).error().code; };
    CHECK(code("<CompleteMultipartUpload/>") == errc::malformed_xml);
    CHECK(code("<CompleteMultipartUpload><Part><ETag>a</ETag></Part></CompleteMultipartUpload>") ==
          errc::malformed_xml);
    CHECK(
        code("<CompleteMultipartUpload><Part><PartNumber>1</PartNumber></Part></CompleteMultipartUpload>") ==
        errc::malformed_xml);
    CHECK(code("<CompleteMultipartUpload><Part><PartNumber>x</PartNumber><ETag>a</ETag></Part>"
               "</CompleteMultipartUpload>") == errc::malformed_xml);
    CHECK(code("<CompleteMultipartUpload><Part><PartNumber>-1</PartNumber><ETag>a</ETag></Part>"
               "</CompleteMultipartUpload>") == errc::malformed_xml);
    CHECK(code("<CompleteMultipartUpload><Part><PartNumber>0</PartNumber><ETag>a</ETag></Part>"
               "</CompleteMultipartUpload>") == errc::invalid_argument);
    CHECK(code("<CompleteMultipartUpload><Part><PartNumber>10001</PartNumber><ETag>a</ETag></Part>"
               "</CompleteMultipartUpload>") == errc::invalid_argument);
    CHECK(code("<CompleteMultipartUpload><Part><PartNumber>2</PartNumber><ETag>a</ETag></Part>"
               "<Part><PartNumber>1</PartNumber><ETag>b</ETag></Part></CompleteMultipartUpload>") ==
          errc::invalid_part_order);
    CHECK(code("<CompleteMultipartUpload><Part><PartNumber>2</PartNumber><ETag>a</ETag></Part>"
               "<Part><PartNumber>2</PartNumber><ETag>b</ETag></Part></CompleteMultipartUpload>") ==
          errc::invalid_part_order);
}

TEST_CASE("VersioningConfiguration accepts Enabled and Suspended and ignores MfaDelete")
{
    auto on = parse_versioning_configuration(
        R"(<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>Enabled</Status><MfaDelete>Disabled</MfaDelete></VersioningConfiguration>)");
    CHECK(on.value().status == versioning_status::enabled);
    auto off = parse_versioning_configuration(
        "<VersioningConfiguration> <Status>Suspended</Status> </VersioningConfiguration>");
    CHECK(off.value().status == versioning_status::suspended);
    CHECK_FALSE(parse_versioning_configuration("<VersioningConfiguration/>").value().status.has_value());
    CHECK(parse_versioning_configuration(
              "<VersioningConfiguration><Status>enabled</Status></VersioningConfiguration>")
              .error()
              .code == errc::malformed_xml);
    CHECK(parse_versioning_configuration("").error().code == errc::malformed_xml);
}

TEST_CASE("Tagging parses a tag set and enforces S3's tag rules")
{
    auto tags = parse_tagging("<Tagging><TagSet><Tag><Key>env</Key><Value>prod</Value></Tag>"
                              "<Tag><Key>empty</Key><Value></Value></Tag></TagSet></Tagging>");
    REQUIRE(tags);
    REQUIRE(tags->size() == 2);
    CHECK((*tags)[0].key == "env");
    CHECK((*tags)[0].value == "prod");
    CHECK((*tags)[1].value.empty());
    CHECK(parse_tagging("<Tagging><TagSet/></Tagging>").value().empty());

    auto code = [](std::string_view body) { return parse_tagging(body).error().code; };
    CHECK(code("<Tagging/>") == errc::malformed_xml);
    CHECK(code("<Tagging><TagSet><Tag><Key>k</Key></Tag></TagSet></Tagging>") == errc::malformed_xml);
    CHECK(code("<Tagging><TagSet><Tag><Key></Key><Value>v</Value></Tag></TagSet></Tagging>") ==
          errc::invalid_tag);
    CHECK(code("<Tagging><TagSet><Tag><Key>aws:x</Key><Value>v</Value></Tag></TagSet></Tagging>") ==
          errc::invalid_tag);
    CHECK(
        code("<Tagging><TagSet><Tag><Key>k</Key><Value>1</Value></Tag><Tag><Key>k</Key><Value>2</Value></Tag>"
             "</TagSet></Tagging>") == errc::invalid_tag);
    CHECK(code("<Tagging><TagSet><Tag><Key>" + std::string(129, 'k') +
               "</Key><Value>v</Value></Tag></TagSet></Tagging>") == errc::invalid_tag);
    CHECK(code("<Tagging><TagSet><Tag><Key>k</Key><Value>" + std::string(257, 'v') +
               "</Value></Tag></TagSet></Tagging>") == errc::invalid_tag);

    // 128 characters of two bytes each are still 128 characters.
    std::string wide;
    for (int i = 0; i < 128; ++i)
        wide += "\xC3\xA9";
    CHECK(parse_tagging("<Tagging><TagSet><Tag><Key>" + wide +
                        "</Key><Value>v</Value></Tag></TagSet></Tagging>"));

    std::string eleven = "<Tagging><TagSet>";
    for (int i = 0; i < 11; ++i)
        eleven += "<Tag><Key>k" + std::to_string(i) + "</Key><Value>v</Value></Tag>";
    eleven += "</TagSet></Tagging>";
    CHECK(parse_tagging(eleven).error().code == errc::invalid_tag);
    CHECK(parse_tagging(eleven, 50).value().size() == 11);
}
