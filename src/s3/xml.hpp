#pragma once
/// \file
/// S3 XML in both directions: a small streaming writer for response bodies, and parsers (pugixml) for the
/// request bodies S3 accepts. Parsers tolerate whitespace, a namespace (default or prefixed) on any
/// element, and unknown elements; they fail with `malformed_xml` on bad XML, a wrong root element or a
/// missing required element, as S3 does.

#include "common/result.hpp"
#include "s3/tagging.hpp"
#include "s3/types.hpp"

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace depot::s3 {

/// The namespace of every S3 response root element except `Error`.
inline constexpr std::string_view s3_xmlns = "http://s3.amazonaws.com/doc/2006-03-01/";

/// Appends `text` escaped for XML character data and attribute values: & < > " ' become entities, control
/// characters become character references (NUL, which no XML can carry, becomes U+FFFD), and bytes that are
/// not well-formed UTF-8 become U+FFFD so the document stays well-formed whatever the input.
void append_xml_escaped(std::string& out, std::string_view text);

/// `append_xml_escaped` into a new string.
std::string xml_escape(std::string_view text);

/// Writes an XML document element by element, without whitespace between elements. Element names are
/// kept by reference until closed: pass string literals (or strings that outlive the writer).
class xml_writer
{
public:
    /// Starts the document with `<?xml version="1.0" encoding="UTF-8"?>`.
    xml_writer();

    /// Opens an element; with a non-empty `xmlns`, adds the default namespace attribute (for roots).
    xml_writer& open(std::string_view name, std::string_view xmlns = {});
    /// Closes the innermost open element. Precondition: one is open.
    xml_writer& close();

    /// `<name>text</name>` with `text` escaped.
    xml_writer& element(std::string_view name, std::string_view text);
    xml_writer& element(std::string_view name, const char* text)
    {
        return element(name, std::string_view(text));
    }
    xml_writer& element(std::string_view name, const std::string& text)
    {
        return element(name, std::string_view(text));
    }
    /// `<name>true</name>` or `<name>false</name>`.
    xml_writer& element(std::string_view name, bool value);
    /// `<name>123</name>`.
    template <std::integral T>
    requires(!std::same_as<T, bool>) xml_writer& element(std::string_view name, T value)
    {
        if constexpr (std::is_signed_v<T>)
            return signed_number(name, value);
        else
            return unsigned_number(name, value);
    }
    /// Character data (escaped) inside the innermost open element.
    xml_writer& text(std::string_view text);
    /// `element(name, text)` only when `text` is not empty.
    xml_writer& element_if(std::string_view name, std::string_view text);

    /// Closes every open element and returns the document.
    std::string finish() &&;

private:
    xml_writer& signed_number(std::string_view name, long long value);
    xml_writer& unsigned_number(std::string_view name, unsigned long long value);
    void start_tag(std::string_view name);
    void end_tag(std::string_view name);

    std::string out_;
    std::vector<std::string_view> open_;
};

// ---- request bodies ------------------------------------------------------------------------------------

/// CreateBucket's optional body.
struct create_bucket_configuration
{
    std::string location_constraint; ///< empty when absent (meaning us-east-1)
};

/// Parses `<CreateBucketConfiguration><LocationConstraint>..</LocationConstraint>..`. An empty (or
/// whitespace-only) body is allowed and yields no constraint. Errors: malformed_xml.
result<create_bucket_configuration> parse_create_bucket_configuration(std::string_view body);

/// One entry of a DeleteObjects request.
struct object_identifier
{
    std::string key; ///< exactly as sent (not trimmed); may be empty or invalid, the caller validates it
    std::optional<std::string> version_id;
};

/// The DeleteObjects (POST ?delete) body.
struct delete_objects_request
{
    bool quiet = false;
    std::vector<object_identifier> objects; ///< 1..1000, in request order
};

/// The maximum number of keys in one DeleteObjects request.
inline constexpr std::size_t max_delete_objects = 1000;

/// Parses `<Delete><Quiet>true</Quiet><Object><Key>k</Key><VersionId>v</VersionId></Object>..</Delete>`.
/// Errors: malformed_xml on bad XML, a missing Key, a Quiet other than true/false, no Object, or more
/// than 1000 Objects (S3 answers MalformedXML for that too).
result<delete_objects_request> parse_delete_objects(std::string_view body);

/// One part of a CompleteMultipartUpload request.
struct completed_part
{
    int part_number = 0;
    std::string etag; ///< without surrounding quotes or whitespace
    checksums checksum;
};

/// Parses `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"x"</ETag>..</Part>..`.
/// Errors: malformed_xml on bad XML, no Part, or a Part without an integer PartNumber or an ETag;
/// invalid_argument for a part number outside 1..10000; invalid_part_order unless part numbers are
/// strictly ascending.
result<std::vector<completed_part>> parse_complete_multipart_upload(std::string_view body);

/// The PutBucketVersioning body. MfaDelete is accepted and ignored.
struct versioning_configuration
{
    std::optional<versioning_status> status; ///< enabled or suspended; nullopt when Status is absent
};

/// Parses `<VersioningConfiguration><Status>Enabled|Suspended</Status></VersioningConfiguration>`.
/// Errors: malformed_xml on bad XML or any other Status value.
result<versioning_configuration> parse_versioning_configuration(std::string_view body);

/// Parses `<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag>..</TagSet></Tagging>`.
/// Errors: malformed_xml on bad XML, a missing TagSet, or a Tag without Key or Value; invalid_tag for a
/// set breaking S3's rules (s3::check_tag_set: more than `max_tags` tags, a key of 0 or more than 128
/// characters, a value above 256 characters, a duplicate key, or a key starting with "aws:").
result<std::vector<tag>> parse_tagging(std::string_view body, std::size_t max_tags = max_object_tags);

} // namespace depot::s3
