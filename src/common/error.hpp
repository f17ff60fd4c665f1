#pragma once
/// \file
/// Expected failures as values. Every layer reports outcomes that depend on input (not found, precondition
/// failed, invalid argument, ...) as an `error` carrying an `errc`; infrastructure failures throw. The S3 and
/// REST boundaries map each `errc` to a protocol code and HTTP status in exactly one table each.

#include <string>
#include <string_view>

namespace depot {

enum class errc
{
    // generic
    invalid_argument,
    not_found,
    already_exists,
    conflict,
    precondition_failed,
    not_modified,
    access_denied,
    unavailable, ///< retriable: the blob store or the database is temporarily unreachable
    io_error,
    too_large,
    not_implemented,
    internal,
    // buckets and objects
    no_such_bucket,
    no_such_key,
    no_such_upload,
    no_such_version,
    bucket_already_exists,       ///< owned by someone else
    bucket_already_owned_by_you, ///< owned by the caller
    bucket_not_empty,
    invalid_bucket_name,
    invalid_object_name, ///< S3: KeyTooLongError / InvalidArgument
    invalid_range,
    bad_digest,
    invalid_digest,
    malformed_xml,
    entity_too_small,
    entity_too_large,
    invalid_part,
    invalid_part_order,
    invalid_request,
    method_not_allowed,
    missing_content_length,
    incomplete_body,
    invalid_storage_class,
    // authentication
    invalid_access_key_id,
    signature_does_not_match,
    request_time_too_skewed,
    expired_presigned_request,
    authorization_header_malformed,
    authorization_query_parameters_error,
    content_sha256_mismatch,
    missing_security_header,
    // S3 protocol details
    key_too_long,                ///< object key longer than 1024 bytes (S3: KeyTooLongError)
    metadata_too_large,          ///< x-amz-meta-* headers above 2 KiB (S3: MetadataTooLarge)
    invalid_tag,                 ///< a tag set breaking S3's tagging rules (S3: InvalidTag)
    invalid_location_constraint, ///< CreateBucketConfiguration names an unknown region
    invalid_part_number,        ///< GetObject ?partNumber=N beyond the object's parts (S3: InvalidPartNumber)
    rate_limited,               ///< the credential exceeded its request rate (S3: 503 SlowDown)
    no_such_cors_configuration, ///< GetBucketCors of a bucket without one (S3: NoSuchCORSConfiguration)
    cors_forbidden,             ///< a CORS preflight no rule allows (S3: 403 AccessForbidden)
    bad_request,                ///< a request missing what its kind needs (S3: 400 BadRequest)
    no_such_tag_set,            ///< GetBucketTagging of a bucket without tags (S3: 404 NoSuchTagSet)
    no_such_lifecycle_configuration, ///< GetBucketLifecycleConfiguration of a bucket without one (S3: 404)
    malformed_post_request, ///< a POST Object body that is not multipart/form-data (MalformedPOSTRequest)
    post_fields_too_large, ///< POST Object fields before the file above 20 KiB (MaxPostPreDataLengthExceeded)
    invalid_bucket_state,  ///< the bucket's state forbids the request (S3: 409 InvalidBucketState)
                           /// GetObjectLockConfiguration of a bucket without Object Lock (S3: 404
                           /// ObjectLockConfigurationNotFound)
    object_lock_configuration_not_found,
    /// GetObjectRetention / GetObjectLegalHold of a version without one (404 NoSuchObjectLockConfiguration)
    no_such_object_lock_configuration,
    // access control (s3/acl.hpp)
    malformed_acl,      ///< an AccessControlPolicy that does not validate (S3: MalformedACLError)
    unresolvable_grant, ///< an e-mail address no user has (S3: UnresolvableGrantByEmailAddress)
    ambiguous_grant,    ///< an e-mail address more than one user has (S3: AmbiguousGrantByEmailAddress)
    acl_not_supported,  ///< an ACL write under BucketOwnerEnforced (S3: AccessControlListNotSupported)
    acl_with_object_ownership,   ///< CreateBucket with an ACL under BucketOwnerEnforced (S3: 400)
    no_such_public_access_block, ///< NoSuchPublicAccessBlockConfiguration (404)
    no_such_ownership_controls,  ///< OwnershipControlsNotFoundError (404)
                                 /// GetBucketEncryption of a bucket without default encryption (S3: 404
                                 /// ServerSideEncryptionConfigurationNotFoundError)
    no_such_encryption_configuration,
    // bucket policies (auth/bucket_policy.hpp)
    malformed_policy,      ///< a policy document that does not validate (S3: 400 MalformedPolicy)
    no_such_bucket_policy, ///< GetBucketPolicy of a bucket without one (S3: 404 NoSuchBucketPolicy)
};

/// A failure with a human-readable message for the client. Messages never contain secrets.
struct error
{
    errc code = errc::internal;
    std::string message;
    /// Optional S3 argument name (reported as ArgumentName in S3 errors), e.g. "x-amz-date".
    std::string argument;
};

inline error make_error(errc code, std::string message = {}, std::string argument = {})
{
    return error{code, std::move(message), std::move(argument)};
}

/// A stable snake_case name for logs and tests.
std::string_view to_string(errc code) noexcept;

} // namespace depot
