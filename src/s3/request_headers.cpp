#include "s3/request_headers.hpp"

#include "common/strings.hpp"

#include <algorithm>
#include <array>
#include <string>

namespace depot::s3 {
namespace {

struct unsupported
{
    std::string_view prefix; ///< a header name, or a prefix of names when it ends with '-'
    std::string_view feature;
};

// Checked in order; a prefix ending in '-' covers the names it starts.
constexpr std::array<unsupported, 14> refused_headers = {{
    {"x-amz-server-side-encryption-aws-kms-key-id", "SSE-KMS"},
    {"x-amz-server-side-encryption-context", "SSE-KMS"},
    {"x-amz-server-side-encryption-bucket-key-enabled", "SSE-KMS (bucket keys)"},
    {"x-amz-bucket-object-lock-token", "Object Lock tokens (replication)"},
    {"x-amz-website-redirect-location", "Website hosting"},
    {"x-amz-write-offset-bytes", "Appending to an object"},
    {"x-amz-mfa", "MFA delete"},
    {"x-amz-checksum-md5", "The MD5 checksum algorithm"},
    {"x-amz-checksum-sha512", "The SHA512 checksum algorithm"},
    {"x-amz-checksum-xxhash3", "The XXHASH3 checksum algorithm"},
    {"x-amz-checksum-xxhash64", "The XXHASH64 checksum algorithm"},
    {"x-amz-checksum-xxhash128", "The XXHASH128 checksum algorithm"},
    {"x-amz-if-match-initiated-time", "A conditional AbortMultipartUpload"},
    {"x-amz-bucket-namespace", "Account-regional bucket namespaces"},
}};

bool matches(std::string_view name, std::string_view prefix)
{
    if (prefix.ends_with('-'))
        return name.size() > prefix.size() && iequals_ascii(name.substr(0, prefix.size()), prefix);
    return iequals_ascii(name, prefix);
}

// Storage classes S3 defines; Depot keeps every object in one (STANDARD).
constexpr std::array<std::string_view, 11> storage_classes = {
    "REDUCED_REDUNDANCY", "STANDARD_IA", "ONEZONE_IA", "INTELLIGENT_TIERING", "GLACIER",    "DEEP_ARCHIVE",
    "OUTPOSTS",           "GLACIER_IR",  "SNOW",       "EXPRESS_ONEZONE",     "FSX_OPENZFS"};

result<void> not_implemented(std::string_view feature, std::string_view name)
{
    return make_error(errc::not_implemented,
                      std::string(feature) + " is not implemented: the header " + std::string(name) +
                          " implies functionality that is not implemented",
                      std::string(name));
}

} // namespace

result<void> check_request_header(std::string_view name, std::string_view value)
{
    if (name.size() < 6 || !iequals_ascii(name.substr(0, 6), "x-amz-"))
        return ok();
    for (const auto& r : refused_headers)
        if (matches(name, r.prefix))
            return not_implemented(r.feature, name);
    if (iequals_ascii(name, "x-amz-storage-class")) {
        if (value == "STANDARD")
            return ok();
        if (std::find(storage_classes.begin(), storage_classes.end(), value) != storage_classes.end())
            return make_error(errc::not_implemented,
                              "The storage class " + std::string(value) +
                                  " is not implemented: every object is stored in STANDARD",
                              "x-amz-storage-class");
        return make_error(errc::invalid_storage_class, "The storage class you specified is not valid.",
                          "x-amz-storage-class");
    }
    if (iequals_ascii(name, "x-amz-optional-object-attributes")) {
        // RestoreStatus is listed for archived objects only; Depot archives nothing.
        if (value == "RestoreStatus")
            return ok();
        return make_error(errc::invalid_argument,
                          "Invalid x-amz-optional-object-attributes: " + std::string(value),
                          "x-amz-optional-object-attributes");
    }
    if (iequals_ascii(name, "x-amz-transition-default-minimum-object-size")) {
        // Only transitions read it, and Depot has none (a Transition rule is 501).
        if (value == "all_storage_classes_128K" || value == "varies_by_storage_class")
            return ok();
        return make_error(errc::invalid_argument,
                          "Invalid x-amz-transition-default-minimum-object-size: " + std::string(value),
                          "x-amz-transition-default-minimum-object-size");
    }
    return ok();
}

} // namespace depot::s3
