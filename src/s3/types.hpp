#pragma once
/// \file
/// Plain records shared by the S3 request parsers and response builders. No behaviour.

#include <chrono>
#include <string>

namespace depot::s3 {

using time_point = std::chrono::system_clock::time_point;

/// The S3 `Owner` / `Initiator` element.
struct owner
{
    std::string id;
    std::string display_name;
};

/// Additional checksums (base64 of the big-endian digest, as in the x-amz-checksum-* headers). An empty
/// string means "not present" and the element is omitted.
struct checksums
{
    std::string crc32;
    std::string crc32c;
    std::string crc64nvme;
    std::string sha1;
    std::string sha256;
    std::string type; ///< "FULL_OBJECT" or "COMPOSITE"; empty to omit ChecksumType

    bool empty() const noexcept
    {
        return crc32.empty() && crc32c.empty() && crc64nvme.empty() && sha1.empty() && sha256.empty();
    }
};

/// A bucket's versioning state. A bucket that was never versioned reports no Status at all.
enum class versioning_status
{
    unversioned,
    enabled,
    suspended
};

/// One object or bucket tag.
struct tag
{
    std::string key;
    std::string value;
};

} // namespace depot::s3
