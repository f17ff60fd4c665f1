#include "s3/responses.hpp"

#include <doctest/doctest.h>
#include <pugixml.hpp>

using namespace depot::s3;
using std::chrono::sys_days;

namespace {

constexpr std::string_view decl = R"(<?xml version="1.0" encoding="UTF-8"?>)";
constexpr std::string_view ns = R"( xmlns="http://s3.amazonaws.com/doc/2006-03-01/")";

const time_point t0 = time_point(sys_days(std::chrono::year{2009} / 10 / 12)) + std::chrono::hours(17) +
                      std::chrono::minutes(50) + std::chrono::seconds(30);

std::string doc(std::string_view root, std::string_view body)
{
    return std::string(decl) + "<" + std::string(root) + std::string(ns) + ">" + std::string(body) + "</" +
           std::string(root) + ">";
}

bool contains(const std::string& xml, std::string_view part)
{
    return xml.find(part) != std::string::npos;
}

/// Every builder must produce a well-formed document.
pugi::xml_node parse(pugi::xml_document& d, const std::string& xml)
{
    REQUIRE(d.load_string(xml.c_str()));
    return d.document_element();
}

} // namespace

TEST_CASE("ListAllMyBucketsResult lists the owner and buckets")
{
    const auto xml =
        list_buckets_xml({.owner = {.id = "u1", .display_name = "alice"},
                          .buckets = {{.name = "b1", .creation_date = t0},
                                      {.name = "b2", .creation_date = t0, .region = "eu-west-1"}}});
    CHECK(xml == doc("ListAllMyBucketsResult",
                     "<Owner><ID>u1</ID><DisplayName>alice</DisplayName></Owner><Buckets>"
                     "<Bucket><Name>b1</Name><CreationDate>2009-10-12T17:50:30.000Z</CreationDate></Bucket>"
                     "<Bucket><Name>b2</Name><CreationDate>2009-10-12T17:50:30.000Z</CreationDate>"
                     "<BucketRegion>eu-west-1</BucketRegion></Bucket></Buckets>"));
    CHECK(list_buckets_xml({}) ==
          doc("ListAllMyBucketsResult", "<Owner><ID></ID></Owner><Buckets></Buckets>"));
}

TEST_CASE("LocationConstraint is empty for us-east-1")
{
    CHECK(location_constraint_xml("us-east-1") == doc("LocationConstraint", ""));
    CHECK(location_constraint_xml("") == doc("LocationConstraint", ""));
    CHECK(location_constraint_xml("eu-west-1") == doc("LocationConstraint", "eu-west-1"));
}

TEST_CASE("VersioningConfiguration has no Status for a never-versioned bucket")
{
    CHECK(versioning_configuration_xml(versioning_status::unversioned) == doc("VersioningConfiguration", ""));
    CHECK(versioning_configuration_xml(versioning_status::enabled) ==
          doc("VersioningConfiguration", "<Status>Enabled</Status>"));
    CHECK(versioning_configuration_xml(versioning_status::suspended) ==
          doc("VersioningConfiguration", "<Status>Suspended</Status>"));
}

TEST_CASE("ListObjects v1 writes Marker, Owner and quoted ETags")
{
    const auto xml = list_objects_xml({.bucket = "b",
                                       .max_keys = 1000,
                                       .contents = {{.key = "a&b",
                                                     .last_modified = t0,
                                                     .etag = "fba9dede5f27731c9771645a39863328",
                                                     .size = 434234,
                                                     .owner = {.id = "u1", .display_name = "alice"}}}});
    CHECK(xml == doc("ListBucketResult",
                     "<Name>b</Name><Prefix></Prefix><Marker></Marker><MaxKeys>1000</MaxKeys>"
                     "<IsTruncated>false</IsTruncated><Contents><Key>a&amp;b</Key>"
                     "<LastModified>2009-10-12T17:50:30.000Z</LastModified>"
                     "<ETag>&quot;fba9dede5f27731c9771645a39863328&quot;</ETag><Size>434234</Size>"
                     "<Owner><ID>u1</ID><DisplayName>alice</DisplayName></Owner>"
                     "<StorageClass>STANDARD</StorageClass></Contents>"));
    pugi::xml_document d;
    CHECK(std::string(parse(d, xml).child("Contents").child_value("ETag")) ==
          "\"fba9dede5f27731c9771645a39863328\"");
}

TEST_CASE("ListObjects v1 writes NextMarker only for a truncated page with a delimiter")
{
    list_objects_result r{.bucket = "b", .delimiter = "/", .is_truncated = true, .next_marker = "photos/"};
    r.common_prefixes = {"photos/"};
    auto xml = list_objects_xml(r);
    CHECK(contains(xml, "<NextMarker>photos/</NextMarker>"));
    CHECK(contains(xml, "<Delimiter>/</Delimiter>"));
    CHECK(contains(xml, "<CommonPrefixes><Prefix>photos/</Prefix></CommonPrefixes>"));

    r.delimiter.clear();
    CHECK_FALSE(contains(list_objects_xml(r), "NextMarker"));
    CHECK_FALSE(contains(list_objects_xml(r), "Delimiter"));
    r.delimiter = "/";
    r.is_truncated = false;
    CHECK_FALSE(contains(list_objects_xml(r), "NextMarker"));
}

TEST_CASE("encoding-type=url encodes keys, prefixes, delimiter and markers in v1")
{
    const auto xml = list_objects_xml({.bucket = "b",
                                       .prefix = "dir one/",
                                       .delimiter = "+",
                                       .marker = "m\x01",
                                       .url_encoding = true,
                                       .is_truncated = true,
                                       .next_marker = "n%",
                                       .contents = {{.key = "dir one/caf\xC3\xA9+1", .last_modified = t0}},
                                       .common_prefixes = {"dir one/x+"}});
    CHECK(contains(xml, "<Prefix>dir%20one/</Prefix>"));
    CHECK(contains(xml, "<Delimiter>%2B</Delimiter>"));
    CHECK(contains(xml, "<Marker>m%01</Marker>"));
    CHECK(contains(xml, "<NextMarker>n%25</NextMarker>"));
    CHECK(contains(xml, "<EncodingType>url</EncodingType>"));
    CHECK(contains(xml, "<Key>dir%20one/caf%C3%A9%2B1</Key>"));
    CHECK(contains(xml, "<CommonPrefixes><Prefix>dir%20one/x%2B</Prefix></CommonPrefixes>"));
}

TEST_CASE("ListObjectsV2 counts keys and prefixes, echoes tokens and writes Owner only with fetch-owner")
{
    list_objects_v2_result r{.bucket = "b",
                             .delimiter = "/",
                             .max_keys = 2,
                             .is_truncated = true,
                             .continuation_token = "MWE=",
                             .next_continuation_token = "MWI=",
                             .contents = {{.key = "a", .last_modified = t0, .etag = "e", .size = 1}},
                             .common_prefixes = {"p/"}};
    auto xml = list_objects_v2_xml(r);
    CHECK(contains(xml, "<KeyCount>2</KeyCount>"));
    CHECK(contains(xml, "<MaxKeys>2</MaxKeys>"));
    CHECK(contains(xml, "<ContinuationToken>MWE=</ContinuationToken>"));
    CHECK(contains(xml, "<NextContinuationToken>MWI=</NextContinuationToken>"));
    CHECK_FALSE(contains(xml, "StartAfter"));
    CHECK_FALSE(contains(xml, "<Owner>"));
    CHECK_FALSE(contains(xml, "Marker"));

    r.fetch_owner = true;
    r.is_truncated = false;
    r.start_after = "a b";
    r.url_encoding = true;
    xml = list_objects_v2_xml(r);
    CHECK(contains(xml, "<Owner>"));
    CHECK_FALSE(contains(xml, "NextContinuationToken"));
    CHECK(contains(xml, "<ContinuationToken>MWE=</ContinuationToken>"));
    CHECK(contains(xml, "<StartAfter>a%20b</StartAfter>"));
    pugi::xml_document d;
    CHECK(parse(d, xml).child("KeyCount").text().as_int() == 2);
}

TEST_CASE("ListVersionsResult interleaves versions and delete markers")
{
    list_versions_result r{.bucket = "b",
                           .max_keys = 2,
                           .is_truncated = true,
                           .next_key_marker = "k",
                           .next_version_id_marker = "v1"};
    r.entries = {
        {.key = "k", .version_id = "v2", .is_latest = true, .is_delete_marker = true, .last_modified = t0},
        {.key = "k", .version_id = "v1", .last_modified = t0, .etag = "e", .size = 3},
        {.key = "u", .last_modified = t0, .etag = "f"}};
    const auto xml = list_versions_xml(r);
    CHECK(contains(xml, "<KeyMarker></KeyMarker><VersionIdMarker></VersionIdMarker>"
                        "<NextKeyMarker>k</NextKeyMarker><NextVersionIdMarker>v1</NextVersionIdMarker>"));
    CHECK(contains(
        xml, "<DeleteMarker><Key>k</Key><VersionId>v2</VersionId><IsLatest>true</IsLatest>"
             "<LastModified>2009-10-12T17:50:30.000Z</LastModified><Owner><ID></ID></Owner></DeleteMarker>"));
    CHECK(contains(xml, "<Version><Key>k</Key><VersionId>v1</VersionId><IsLatest>false</IsLatest>"));
    CHECK(contains(xml, "<VersionId>null</VersionId>"));
    CHECK(xml.find("<DeleteMarker>") < xml.find("<Version>"));
    pugi::xml_document d;
    parse(d, xml);

    r.is_truncated = false;
    CHECK_FALSE(contains(list_versions_xml(r), "NextKeyMarker"));
}

TEST_CASE("CopyObjectResult and CopyPartResult carry the ETag, time and checksums")
{
    copy_result r{
        .etag = "abc", .last_modified = t0, .checksum = {.crc32 = "AAAAAA==", .type = "FULL_OBJECT"}};
    CHECK(copy_object_result_xml(r) ==
          doc("CopyObjectResult",
              "<ETag>&quot;abc&quot;</ETag><LastModified>2009-10-12T17:50:30.000Z</LastModified>"
              "<ChecksumCRC32>AAAAAA==</ChecksumCRC32><ChecksumType>FULL_OBJECT</ChecksumType>"));
    CHECK(contains(copy_part_result_xml(r), "<CopyPartResult"));
}

TEST_CASE("DeleteResult lists deletions and errors; quiet mode only errors")
{
    delete_result r{
        .deleted = {{.key = "a"},
                    {.key = "b", .version_id = "v", .delete_marker = true, .delete_marker_version_id = "m"}},
        .errors = {{.key = "c", .code = "AccessDenied", .message = "Access Denied"}}};
    CHECK(delete_result_xml(r) ==
          doc("DeleteResult",
              "<Deleted><Key>a</Key></Deleted><Deleted><Key>b</Key><VersionId>v</VersionId>"
              "<DeleteMarker>true</DeleteMarker><DeleteMarkerVersionId>m</DeleteMarkerVersionId>"
              "</Deleted><Error><Key>c</Key><Code>AccessDenied</Code><Message>Access Denied</Message>"
              "</Error>"));
    r.quiet = true;
    CHECK(delete_result_xml(r) ==
          doc("DeleteResult",
              "<Error><Key>c</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error>"));
}

TEST_CASE("GetObjectAttributesResponse writes only the requested attributes, ETag bare")
{
    CHECK(object_attributes_xml({.etag = "abc", .object_size = 5}) ==
          doc("GetObjectAttributesResponse", "<ETag>abc</ETag><ObjectSize>5</ObjectSize>"));
    object_attributes a{.checksum = checksums{.sha256 = "x", .type = "COMPOSITE"},
                        .parts = object_parts{.total_parts_count = 2,
                                              .next_part_number_marker = 1,
                                              .max_parts = 1,
                                              .is_truncated = true,
                                              .parts = {{.part_number = 1, .size = 10}}},
                        .storage_class = "STANDARD"};
    CHECK(object_attributes_xml(a) ==
          doc("GetObjectAttributesResponse",
              "<Checksum><ChecksumSHA256>x</ChecksumSHA256><ChecksumType>COMPOSITE</ChecksumType></Checksum>"
              "<ObjectParts><PartsCount>2</PartsCount><PartNumberMarker>0</PartNumberMarker>"
              "<NextPartNumberMarker>1</NextPartNumberMarker><MaxParts>1</MaxParts><IsTruncated>true</"
              "IsTruncated>"
              "<Part><PartNumber>1</PartNumber><Size>10</Size></Part></ObjectParts>"
              "<StorageClass>STANDARD</StorageClass>"));
    CHECK(object_attributes_xml({.checksum = checksums{}}) == doc("GetObjectAttributesResponse", ""));
}

TEST_CASE("Tagging writes a TagSet")
{
    CHECK(tagging_xml({{"k", "v&"}}) ==
          doc("Tagging", "<TagSet><Tag><Key>k</Key><Value>v&amp;</Value></Tag></TagSet>"));
    CHECK(tagging_xml({}) == doc("Tagging", "<TagSet></TagSet>"));
}

TEST_CASE("multipart initiate and complete results")
{
    CHECK(initiate_multipart_upload_xml({.bucket = "b", .key = "k<", .upload_id = "u"}) ==
          doc("InitiateMultipartUploadResult", "<Bucket>b</Bucket><Key>k&lt;</Key><UploadId>u</UploadId>"));
    CHECK(complete_multipart_upload_xml({.location = "http://h/b/k",
                                         .bucket = "b",
                                         .key = "k",
                                         .etag = "abc-2",
                                         .checksum = {.crc32c = "c"}}) ==
          doc("CompleteMultipartUploadResult",
              "<Location>http://h/b/k</Location><Bucket>b</Bucket><Key>k</Key>"
              "<ETag>&quot;abc-2&quot;</ETag><ChecksumCRC32C>c</ChecksumCRC32C>"));
}

TEST_CASE("ListPartsResult lists parts with markers")
{
    list_parts_result r{.bucket = "b",
                        .key = "k",
                        .upload_id = "u",
                        .initiator = {.id = "i"},
                        .owner = {.id = "o"},
                        .next_part_number_marker = 2,
                        .max_parts = 2,
                        .is_truncated = true,
                        .parts = {{.part_number = 1, .last_modified = t0, .etag = "e1", .size = 5},
                                  {.part_number = 2, .last_modified = t0, .etag = "e2", .size = 6}}};
    const auto xml = list_parts_xml(r);
    CHECK(contains(xml,
                   "<Bucket>b</Bucket><Key>k</Key><UploadId>u</UploadId><Initiator><ID>i</ID></Initiator>"
                   "<Owner><ID>o</ID></Owner><StorageClass>STANDARD</StorageClass>"
                   "<PartNumberMarker>0</PartNumberMarker><NextPartNumberMarker>2</NextPartNumberMarker>"
                   "<MaxParts>2</MaxParts><IsTruncated>true</IsTruncated>"));
    CHECK(contains(xml,
                   "<Part><PartNumber>2</PartNumber><LastModified>2009-10-12T17:50:30.000Z</LastModified>"
                   "<ETag>&quot;e2&quot;</ETag><Size>6</Size></Part>"));
    pugi::xml_document d;
    parse(d, xml);
}

TEST_CASE("ListMultipartUploadsResult lists uploads and encodes keys on request")
{
    list_uploads_result r{.bucket = "b",
                          .prefix = "a b",
                          .url_encoding = true,
                          .uploads = {{.key = "a b/1", .upload_id = "u", .initiated = t0}},
                          .common_prefixes = {"a b/"}};
    const auto xml = list_uploads_xml(r);
    CHECK(contains(xml, "<Prefix>a%20b</Prefix>"));
    CHECK(contains(xml, "<MaxUploads>1000</MaxUploads>"));
    CHECK(contains(xml, "<EncodingType>url</EncodingType>"));
    CHECK(contains(xml, "<Upload><Key>a%20b/1</Key><UploadId>u</UploadId><Initiator><ID></ID></Initiator>"
                        "<Owner><ID></ID></Owner><StorageClass>STANDARD</StorageClass>"
                        "<Initiated>2009-10-12T17:50:30.000Z</Initiated></Upload>"));
    CHECK(contains(xml, "<CommonPrefixes><Prefix>a%20b/</Prefix></CommonPrefixes>"));
    pugi::xml_document d;
    parse(d, xml);
}

TEST_CASE("keys with control characters still give well-formed XML without url encoding")
{
    const auto xml =
        list_objects_xml({.bucket = "b", .contents = {{.key = "tab\tcr\r", .last_modified = t0}}});
    pugi::xml_document d;
    CHECK(std::string(parse(d, xml).child("Contents").child_value("Key")) == "tab\tcr\r");
}
