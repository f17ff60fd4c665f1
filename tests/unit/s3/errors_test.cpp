#include "s3/errors.hpp"

#include <doctest/doctest.h>

using namespace depot;
using namespace depot::s3;

TEST_CASE("every errc has an S3 code, a status and a default message")
{
    const auto last = static_cast<int>(errc::no_such_bucket_policy); // the last enumerator
    for (int i = 0; i <= last; ++i) {
        const auto code = static_cast<errc>(i);
        CAPTURE(to_string(code));
        const auto m = lookup(code);
        CHECK_FALSE(m.code.empty());
        CHECK_FALSE(m.message.empty());
        CHECK(m.status >= 300);
        CHECK(m.status < 600);
    }
}

TEST_CASE("the table maps the common S3 errors to AWS's codes and statuses")
{
    struct row
    {
        errc code;
        std::string_view s3;
        unsigned status;
    };
    const row rows[] = {
        {errc::no_such_bucket, "NoSuchBucket", 404},
        {errc::rate_limited, "SlowDown", 503},
        {errc::no_such_tag_set, "NoSuchTagSet", 404},
        {errc::no_such_lifecycle_configuration, "NoSuchLifecycleConfiguration", 404},
        {errc::malformed_post_request, "MalformedPOSTRequest", 400},
        {errc::post_fields_too_large, "MaxPostPreDataLengthExceeded", 400},
        {errc::invalid_bucket_state, "InvalidBucketState", 409},
        {errc::object_lock_configuration_not_found, "ObjectLockConfigurationNotFoundError", 404},
        {errc::no_such_object_lock_configuration, "NoSuchObjectLockConfiguration", 404},
        {errc::malformed_acl, "MalformedACLError", 400},
        {errc::unresolvable_grant, "UnresolvableGrantByEmailAddress", 400},
        {errc::ambiguous_grant, "AmbiguousGrantByEmailAddress", 400},
        {errc::acl_not_supported, "AccessControlListNotSupported", 400},
        {errc::acl_with_object_ownership, "InvalidBucketAclWithObjectOwnership", 400},
        {errc::no_such_public_access_block, "NoSuchPublicAccessBlockConfiguration", 404},
        {errc::no_such_ownership_controls, "OwnershipControlsNotFoundError", 404},
        {errc::no_such_encryption_configuration, "ServerSideEncryptionConfigurationNotFoundError", 404},
        {errc::malformed_policy, "MalformedPolicy", 400},
        {errc::no_such_bucket_policy, "NoSuchBucketPolicy", 404},
        {errc::invalid_part_number, "InvalidPartNumber", 416},
        {errc::no_such_key, "NoSuchKey", 404},
        {errc::no_such_upload, "NoSuchUpload", 404},
        {errc::bucket_already_exists, "BucketAlreadyExists", 409},
        {errc::bucket_already_owned_by_you, "BucketAlreadyOwnedByYou", 409},
        {errc::bucket_not_empty, "BucketNotEmpty", 409},
        {errc::invalid_range, "InvalidRange", 416},
        {errc::precondition_failed, "PreconditionFailed", 412},
        {errc::not_modified, "NotModified", 304},
        {errc::unavailable, "SlowDown", 503},
        {errc::content_sha256_mismatch, "XAmzContentSHA256Mismatch", 400},
        {errc::method_not_allowed, "MethodNotAllowed", 405},
        {errc::not_implemented, "NotImplemented", 501},
        {errc::internal, "InternalError", 500},
        {errc::access_denied, "AccessDenied", 403},
        {errc::request_time_too_skewed, "RequestTimeTooSkewed", 403},
        {errc::expired_presigned_request, "AccessDenied", 403},
        {errc::missing_content_length, "MissingContentLength", 411},
        {errc::entity_too_large, "EntityTooLarge", 400},
        {errc::key_too_long, "KeyTooLongError", 400},
        {errc::invalid_object_name, "InvalidArgument", 400},
        {errc::malformed_xml, "MalformedXML", 400},
        {errc::bad_digest, "BadDigest", 400},
        {errc::invalid_digest, "InvalidDigest", 400},
        {errc::metadata_too_large, "MetadataTooLarge", 400},
        {errc::signature_does_not_match, "SignatureDoesNotMatch", 403},
        {errc::invalid_access_key_id, "InvalidAccessKeyId", 403},
    };
    for (const auto& r : rows) {
        CAPTURE(to_string(r.code));
        CHECK(lookup(r.code).code == r.s3);
        CHECK(lookup(r.code).status == r.status);
    }
    CHECK(lookup(errc::expired_presigned_request).message == "Request has expired");
    CHECK(lookup(errc::no_such_bucket).message == "The specified bucket does not exist");
}

TEST_CASE("describe uses the error's own message and falls back to the table's")
{
    auto own = describe(make_error(errc::no_such_key, "gone"));
    CHECK(own.code == "NoSuchKey");
    CHECK(own.status == 404);
    CHECK(own.message == "gone");
    CHECK(own.argument_name.empty());

    auto fallback = describe(make_error(errc::no_such_key));
    CHECK(fallback.message == "The specified key does not exist.");
}

TEST_CASE("describe splits an argument into its name and value")
{
    auto named = describe(make_error(errc::access_denied, "", "x-amz-date"));
    CHECK(named.argument_name == "x-amz-date");
    CHECK(named.argument_value.empty());

    auto valued = describe(argument_error(errc::invalid_argument, "bad", "continuation-token", "YQ=="));
    CHECK(valued.argument_name == "continuation-token");
    CHECK(valued.argument_value == "YQ==");
}

TEST_CASE("error_xml produces S3's error document with escaped text")
{
    auto info = describe(make_error(errc::no_such_key));
    CHECK(error_xml(info, "/b/a&b", "REQ1") ==
          R"(<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code>)"
          R"(<Message>The specified key does not exist.</Message><Resource>/b/a&amp;b</Resource>)"
          R"(<RequestId>REQ1</RequestId></Error>)");
}

TEST_CASE("error_xml reports ArgumentName and ArgumentValue when the error names an argument")
{
    auto info = describe(argument_error(errc::invalid_argument,
                                        "Provided max-keys not an integer or within integer range",
                                        "max-keys", "<x>"));
    const auto xml = error_xml(info, "/b", "R");
    CHECK(xml.find("<Code>InvalidArgument</Code>") != std::string::npos);
    CHECK(xml.find("<ArgumentName>max-keys</ArgumentName><ArgumentValue>&lt;x&gt;</ArgumentValue>") !=
          std::string::npos);
}
