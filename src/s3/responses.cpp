#include "s3/responses.hpp"

#include "common/http_date.hpp"
#include "common/uri.hpp"
#include "s3/etag.hpp"
#include "s3/xml.hpp"

namespace depot::s3 {

namespace {

/// A key-valued field as the response must carry it: percent-encoded under encoding-type=url. S3 keeps
/// '/' as it is.
class key_encoder
{
public:
    explicit key_encoder(bool url) : url_(url) {}
    std::string operator()(std::string_view value) const
    {
        return url_ ? uri_encode(value, true) : std::string(value);
    }

private:
    bool url_;
};

void write_owner(xml_writer& w, const char* element, const owner& o)
{
    w.open(element);
    w.element("ID", o.id);
    w.element_if("DisplayName", o.display_name);
    w.close();
}

/// Checksum elements in S3's order; absent ones are skipped.
void write_checksums(xml_writer& w, const checksums& c, bool with_type)
{
    w.element_if("ChecksumCRC32", c.crc32);
    w.element_if("ChecksumCRC32C", c.crc32c);
    w.element_if("ChecksumCRC64NVME", c.crc64nvme);
    w.element_if("ChecksumSHA1", c.sha1);
    w.element_if("ChecksumSHA256", c.sha256);
    if (with_type)
        w.element_if("ChecksumType", c.type);
}

void write_common_prefixes(xml_writer& w, const std::vector<std::string>& prefixes, const key_encoder& enc)
{
    for (const auto& p : prefixes) {
        w.open("CommonPrefixes");
        w.element("Prefix", enc(p));
        w.close();
    }
}

void write_object(xml_writer& w, const object_entry& o, bool with_owner, const key_encoder& enc)
{
    w.open("Contents");
    w.element("Key", enc(o.key));
    w.element("LastModified", format_iso8601(o.last_modified));
    w.element("ETag", quote_etag(o.etag));
    w.element_if("ChecksumAlgorithm", o.checksum_algorithm);
    w.element_if("ChecksumType", o.checksum_type);
    w.element("Size", o.size);
    if (with_owner)
        write_owner(w, "Owner", o.owner);
    w.element("StorageClass", o.storage_class);
    w.close();
}

std::string copy_xml(const char* root, const copy_result& r)
{
    xml_writer w;
    w.open(root, s3_xmlns);
    w.element("ETag", quote_etag(r.etag));
    w.element("LastModified", format_iso8601(r.last_modified));
    write_checksums(w, r.checksum, true);
    return std::move(w).finish();
}

} // namespace

// ---- buckets -------------------------------------------------------------------------------------------

std::string list_buckets_xml(const list_buckets_result& r)
{
    xml_writer w;
    w.open("ListAllMyBucketsResult", s3_xmlns);
    write_owner(w, "Owner", r.owner);
    w.open("Buckets");
    for (const auto& b : r.buckets) {
        w.open("Bucket");
        w.element("Name", b.name);
        w.element("CreationDate", format_iso8601(b.creation_date));
        w.element_if("BucketRegion", b.region);
        w.close();
    }
    w.close();
    w.element_if("ContinuationToken", r.continuation_token);
    w.element_if("Prefix", r.prefix);
    return std::move(w).finish();
}

std::string location_constraint_xml(std::string_view region)
{
    xml_writer w;
    w.open("LocationConstraint", s3_xmlns);
    // S3 reports us-east-1, its original region, as an empty LocationConstraint.
    if (region != "us-east-1")
        w.text(region);
    return std::move(w).finish();
}

std::string versioning_configuration_xml(versioning_status status)
{
    xml_writer w;
    w.open("VersioningConfiguration", s3_xmlns);
    if (status == versioning_status::enabled)
        w.element("Status", "Enabled");
    else if (status == versioning_status::suspended)
        w.element("Status", "Suspended");
    return std::move(w).finish();
}

// ---- object listings -----------------------------------------------------------------------------------

std::string list_objects_xml(const list_objects_result& r)
{
    const key_encoder enc(r.url_encoding);
    xml_writer w;
    w.open("ListBucketResult", s3_xmlns);
    w.element("Name", r.bucket);
    w.element("Prefix", enc(r.prefix));
    w.element("Marker", enc(r.marker));
    if (r.is_truncated && !r.delimiter.empty())
        w.element("NextMarker", enc(r.next_marker));
    w.element("MaxKeys", r.max_keys);
    w.element_if("Delimiter", enc(r.delimiter));
    w.element("IsTruncated", r.is_truncated);
    if (r.url_encoding)
        w.element("EncodingType", "url");
    for (const auto& o : r.contents)
        write_object(w, o, true, enc);
    write_common_prefixes(w, r.common_prefixes, enc);
    return std::move(w).finish();
}

std::string list_objects_v2_xml(const list_objects_v2_result& r)
{
    const key_encoder enc(r.url_encoding);
    xml_writer w;
    w.open("ListBucketResult", s3_xmlns);
    w.element("Name", r.bucket);
    w.element("Prefix", enc(r.prefix));
    w.element("KeyCount", r.contents.size() + r.common_prefixes.size());
    w.element("MaxKeys", r.max_keys);
    w.element_if("Delimiter", enc(r.delimiter));
    w.element("IsTruncated", r.is_truncated);
    if (r.url_encoding)
        w.element("EncodingType", "url");
    if (r.continuation_token)
        w.element("ContinuationToken", *r.continuation_token);
    if (r.is_truncated)
        w.element_if("NextContinuationToken", r.next_continuation_token);
    if (r.start_after)
        w.element("StartAfter", enc(*r.start_after));
    for (const auto& o : r.contents)
        write_object(w, o, r.fetch_owner, enc);
    write_common_prefixes(w, r.common_prefixes, enc);
    return std::move(w).finish();
}

std::string list_versions_xml(const list_versions_result& r)
{
    const key_encoder enc(r.url_encoding);
    xml_writer w;
    w.open("ListVersionsResult", s3_xmlns);
    w.element("Name", r.bucket);
    w.element("Prefix", enc(r.prefix));
    w.element("KeyMarker", enc(r.key_marker));
    w.element("VersionIdMarker", r.version_id_marker);
    if (r.is_truncated) {
        w.element("NextKeyMarker", enc(r.next_key_marker));
        w.element("NextVersionIdMarker", r.next_version_id_marker);
    }
    w.element("MaxKeys", r.max_keys);
    w.element_if("Delimiter", enc(r.delimiter));
    w.element("IsTruncated", r.is_truncated);
    if (r.url_encoding)
        w.element("EncodingType", "url");
    for (const auto& v : r.entries) {
        w.open(v.is_delete_marker ? "DeleteMarker" : "Version");
        w.element("Key", enc(v.key));
        w.element("VersionId",
                  v.version_id.empty() ? std::string_view("null") : std::string_view(v.version_id));
        w.element("IsLatest", v.is_latest);
        w.element("LastModified", format_iso8601(v.last_modified));
        if (!v.is_delete_marker) {
            w.element("ETag", quote_etag(v.etag));
            w.element_if("ChecksumAlgorithm", v.checksum_algorithm);
            w.element_if("ChecksumType", v.checksum_type);
            w.element("Size", v.size);
            w.element("StorageClass", v.storage_class);
        }
        write_owner(w, "Owner", v.owner);
        w.close();
    }
    write_common_prefixes(w, r.common_prefixes, enc);
    return std::move(w).finish();
}

// ---- objects -------------------------------------------------------------------------------------------

std::string copy_object_result_xml(const copy_result& r)
{
    return copy_xml("CopyObjectResult", r);
}

std::string post_response_xml(std::string_view location, std::string_view bucket, std::string_view key,
                              std::string_view quoted_etag)
{
    xml_writer w;
    w.open("PostResponse");
    w.element("Location", location);
    w.element("Bucket", bucket);
    w.element("Key", key);
    w.element("ETag", quoted_etag);
    w.close();
    return std::move(w).finish();
}

std::string copy_part_result_xml(const copy_result& r)
{
    return copy_xml("CopyPartResult", r);
}

std::string delete_result_xml(const delete_result& r)
{
    xml_writer w;
    w.open("DeleteResult", s3_xmlns);
    if (!r.quiet) {
        for (const auto& d : r.deleted) {
            w.open("Deleted");
            w.element("Key", d.key);
            w.element_if("VersionId", d.version_id);
            if (d.delete_marker)
                w.element("DeleteMarker", true);
            w.element_if("DeleteMarkerVersionId", d.delete_marker_version_id);
            w.close();
        }
    }
    for (const auto& e : r.errors) {
        w.open("Error");
        w.element("Key", e.key);
        w.element_if("VersionId", e.version_id);
        w.element("Code", e.code);
        w.element("Message", e.message);
        w.close();
    }
    return std::move(w).finish();
}

std::string object_attributes_xml(const object_attributes& a)
{
    xml_writer w;
    w.open("GetObjectAttributesResponse", s3_xmlns);
    if (a.etag)
        w.element("ETag", *a.etag);
    if (a.checksum && !a.checksum->empty()) {
        w.open("Checksum");
        write_checksums(w, *a.checksum, true);
        w.close();
    }
    if (a.parts) {
        const auto& p = *a.parts;
        w.open("ObjectParts");
        w.element("PartsCount", p.total_parts_count);
        w.element("PartNumberMarker", p.part_number_marker);
        w.element("NextPartNumberMarker", p.next_part_number_marker);
        w.element("MaxParts", p.max_parts);
        w.element("IsTruncated", p.is_truncated);
        for (const auto& part : p.parts) {
            w.open("Part");
            write_checksums(w, part.checksum, false);
            w.element("PartNumber", part.part_number);
            w.element("Size", part.size);
            w.close();
        }
        w.close();
    }
    if (a.storage_class)
        w.element("StorageClass", *a.storage_class);
    if (a.object_size)
        w.element("ObjectSize", *a.object_size);
    return std::move(w).finish();
}

std::string tagging_xml(const std::vector<tag>& tags)
{
    xml_writer w;
    w.open("Tagging", s3_xmlns);
    w.open("TagSet");
    for (const auto& t : tags) {
        w.open("Tag");
        w.element("Key", t.key);
        w.element("Value", t.value);
        w.close();
    }
    return std::move(w).finish();
}

// ---- multipart uploads ---------------------------------------------------------------------------------

std::string initiate_multipart_upload_xml(const initiate_multipart_result& r)
{
    xml_writer w;
    w.open("InitiateMultipartUploadResult", s3_xmlns);
    w.element("Bucket", r.bucket);
    w.element("Key", r.key);
    w.element("UploadId", r.upload_id);
    return std::move(w).finish();
}

std::string complete_multipart_upload_xml(const complete_multipart_result& r)
{
    xml_writer w;
    w.open("CompleteMultipartUploadResult", s3_xmlns);
    w.element("Location", r.location);
    w.element("Bucket", r.bucket);
    w.element("Key", r.key);
    w.element("ETag", quote_etag(r.etag));
    write_checksums(w, r.checksum, true);
    return std::move(w).finish();
}

std::string list_parts_xml(const list_parts_result& r)
{
    xml_writer w;
    w.open("ListPartsResult", s3_xmlns);
    w.element("Bucket", r.bucket);
    w.element("Key", r.key);
    w.element("UploadId", r.upload_id);
    write_owner(w, "Initiator", r.initiator);
    write_owner(w, "Owner", r.owner);
    w.element("StorageClass", r.storage_class);
    w.element("PartNumberMarker", r.part_number_marker);
    w.element("NextPartNumberMarker", r.next_part_number_marker);
    w.element("MaxParts", r.max_parts);
    w.element("IsTruncated", r.is_truncated);
    w.element_if("ChecksumAlgorithm", r.checksum_algorithm);
    w.element_if("ChecksumType", r.checksum_type);
    for (const auto& p : r.parts) {
        w.open("Part");
        w.element("PartNumber", p.part_number);
        w.element("LastModified", format_iso8601(p.last_modified));
        w.element("ETag", quote_etag(p.etag));
        w.element("Size", p.size);
        write_checksums(w, p.checksum, false);
        w.close();
    }
    return std::move(w).finish();
}

std::string list_uploads_xml(const list_uploads_result& r)
{
    const key_encoder enc(r.url_encoding);
    xml_writer w;
    w.open("ListMultipartUploadsResult", s3_xmlns);
    w.element("Bucket", r.bucket);
    w.element("KeyMarker", enc(r.key_marker));
    w.element("UploadIdMarker", r.upload_id_marker);
    w.element("NextKeyMarker", enc(r.next_key_marker));
    w.element("NextUploadIdMarker", r.next_upload_id_marker);
    w.element_if("Delimiter", enc(r.delimiter));
    w.element("Prefix", enc(r.prefix));
    w.element("MaxUploads", r.max_uploads);
    w.element("IsTruncated", r.is_truncated);
    if (r.url_encoding)
        w.element("EncodingType", "url");
    for (const auto& u : r.uploads) {
        w.open("Upload");
        w.element("Key", enc(u.key));
        w.element("UploadId", u.upload_id);
        write_owner(w, "Initiator", u.initiator);
        write_owner(w, "Owner", u.owner);
        w.element("StorageClass", u.storage_class);
        w.element("Initiated", format_iso8601(u.initiated));
        w.element_if("ChecksumAlgorithm", u.checksum_algorithm);
        w.element_if("ChecksumType", u.checksum_type);
        w.close();
    }
    write_common_prefixes(w, r.common_prefixes, enc);
    return std::move(w).finish();
}

} // namespace depot::s3
