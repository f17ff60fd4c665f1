#include "s3/errors.hpp"

#include "s3/xml.hpp"

namespace depot::s3 {

error_mapping lookup(errc code) noexcept
{
    switch (code) {
    case errc::invalid_argument:
        return {"InvalidArgument", 400, "Invalid Argument"};
    case errc::not_found:
        return {"NotFound", 404, "The specified resource does not exist."};
    case errc::already_exists:
        return {"AlreadyExists", 409, "The specified resource already exists."};
    case errc::conflict:
        return {
            "OperationAborted", 409,
            "A conflicting conditional operation is currently in progress against this resource. Try again."};
    case errc::precondition_failed:
        return {"PreconditionFailed", 412, "At least one of the pre-conditions you specified did not hold"};
    case errc::not_modified:
        return {"NotModified", 304, "Not Modified"};
    case errc::access_denied:
        return {"AccessDenied", 403, "Access Denied"};
    case errc::unavailable:
        return {"SlowDown", 503, "Please reduce your request rate."};
    case errc::io_error:
        return {"InternalError", 500, "We encountered an internal error. Please try again."};
    case errc::too_large:
        return {"MaxMessageLengthExceeded", 400, "Your request was too big."};
    case errc::not_implemented:
        return {"NotImplemented", 501,
                "A header you provided implies functionality that is not implemented."};
    case errc::internal:
        return {"InternalError", 500, "We encountered an internal error. Please try again."};
    case errc::no_such_bucket:
        return {"NoSuchBucket", 404, "The specified bucket does not exist"};
    case errc::no_such_key:
        return {"NoSuchKey", 404, "The specified key does not exist."};
    case errc::no_such_upload:
        return {
            "NoSuchUpload", 404,
            "The specified upload does not exist. The upload ID may be invalid, or the upload may have been "
            "aborted or completed."};
    case errc::no_such_version:
        return {"NoSuchVersion", 404, "The specified version does not exist."};
    case errc::bucket_already_exists:
        return {
            "BucketAlreadyExists", 409,
            "The requested bucket name is not available. The bucket namespace is shared by all users of the "
            "system. Please select a different name and try again."};
    case errc::bucket_already_owned_by_you:
        return {"BucketAlreadyOwnedByYou", 409,
                "Your previous request to create the named bucket succeeded and you already own it."};
    case errc::bucket_not_empty:
        return {"BucketNotEmpty", 409, "The bucket you tried to delete is not empty"};
    case errc::invalid_bucket_name:
        return {"InvalidBucketName", 400, "The specified bucket is not valid."};
    case errc::invalid_object_name:
        return {"InvalidArgument", 400, "Object key is not valid."};
    case errc::invalid_range:
        return {"InvalidRange", 416, "The requested range is not satisfiable"};
    case errc::bad_digest:
        return {"BadDigest", 400, "The Content-MD5 you specified did not match what we received."};
    case errc::invalid_digest:
        return {"InvalidDigest", 400, "The Content-MD5 you specified is not valid."};
    case errc::malformed_xml:
        return {"MalformedXML", 400,
                "The XML you provided was not well-formed or did not validate against our published schema."};
    case errc::entity_too_small:
        return {"EntityTooSmall", 400,
                "Your proposed upload is smaller than the minimum allowed object size."};
    case errc::entity_too_large:
        return {"EntityTooLarge", 400, "Your proposed upload exceeds the maximum allowed object size."};
    case errc::invalid_part:
        return {
            "InvalidPart", 400,
            "One or more of the specified parts could not be found. The part may not have been uploaded, or "
            "the specified entity tag may not match the part's entity tag."};
    case errc::invalid_part_order:
        return {
            "InvalidPartOrder", 400,
            "The list of parts was not in ascending order. The parts list must be specified in order by part "
            "number."};
    case errc::invalid_request:
        return {"InvalidRequest", 400, "Invalid Request"};
    case errc::method_not_allowed:
        return {"MethodNotAllowed", 405, "The specified method is not allowed against this resource."};
    case errc::missing_content_length:
        return {"MissingContentLength", 411, "You must provide the Content-Length HTTP header."};
    case errc::incomplete_body:
        return {"IncompleteBody", 400,
                "You did not provide the number of bytes specified by the Content-Length HTTP header."};
    case errc::invalid_storage_class:
        return {"InvalidStorageClass", 400, "The storage class you specified is not valid."};
    case errc::invalid_access_key_id:
        return {"InvalidAccessKeyId", 403,
                "The AWS Access Key Id you provided does not exist in our records."};
    case errc::signature_does_not_match:
        return {
            "SignatureDoesNotMatch", 403,
            "The request signature we calculated does not match the signature you provided. Check your key "
            "and signing method."};
    case errc::request_time_too_skewed:
        return {"RequestTimeTooSkewed", 403,
                "The difference between the request time and the current time is too large."};
    case errc::expired_presigned_request:
        return {"AccessDenied", 403, "Request has expired"};
    case errc::authorization_header_malformed:
        return {"AuthorizationHeaderMalformed", 400, "The authorization header is malformed."};
    case errc::authorization_query_parameters_error:
        return {"AuthorizationQueryParametersError", 400,
                "The authorization query parameters are malformed."};
    case errc::content_sha256_mismatch:
        return {"XAmzContentSHA256Mismatch", 400,
                "The provided 'x-amz-content-sha256' header does not match what was computed."};
    case errc::missing_security_header:
        return {"MissingSecurityHeader", 400, "Your request was missing a required header."};
    case errc::key_too_long:
        return {"KeyTooLongError", 400, "Your key is too long"};
    case errc::metadata_too_large:
        return {"MetadataTooLarge", 400, "Your metadata headers exceed the maximum allowed metadata size."};
    case errc::invalid_tag:
        return {"InvalidTag", 400, "The tag provided was not a valid tag."};
    case errc::invalid_location_constraint:
        return {"InvalidLocationConstraint", 400, "The specified location-constraint is not valid"};
    case errc::invalid_part_number:
        return {"InvalidPartNumber", 416, "The requested partnumber is not satisfiable"};
    case errc::rate_limited:
        return {"SlowDown", 503, "Please reduce your request rate."};
    case errc::no_such_cors_configuration:
        return {"NoSuchCORSConfiguration", 404, "The CORS configuration does not exist"};
    case errc::cors_forbidden:
        return {"AccessForbidden", 403, "CORSResponse: This CORS request is not allowed."};
    case errc::bad_request:
        return {"BadRequest", 400, "Bad Request"};
    case errc::no_such_tag_set:
        return {"NoSuchTagSet", 404, "The TagSet does not exist"};
    case errc::no_such_lifecycle_configuration:
        return {"NoSuchLifecycleConfiguration", 404, "The lifecycle configuration does not exist"};
    case errc::malformed_post_request:
        return {"MalformedPOSTRequest", 400,
                "The body of your POST request is not well-formed multipart/form-data."};
    case errc::post_fields_too_large:
        return {"MaxPostPreDataLengthExceeded", 400,
                "Your POST request fields preceding the upload file were too large."};
    case errc::invalid_bucket_state:
        return {"InvalidBucketState", 409, "The request is not valid with the current state of the bucket."};
    case errc::object_lock_configuration_not_found:
        return {"ObjectLockConfigurationNotFoundError", 404,
                "Object Lock configuration does not exist for this bucket"};
    case errc::no_such_object_lock_configuration:
        return {"NoSuchObjectLockConfiguration", 404,
                "The specified object does not have a ObjectLock configuration"};
    case errc::malformed_acl:
        return {"MalformedACLError", 400,
                "The XML you provided was not well-formed or did not validate against our published schema."};
    case errc::unresolvable_grant:
        return {"UnresolvableGrantByEmailAddress", 400,
                "The email address you provided does not match any account on record."};
    case errc::ambiguous_grant:
        return {"AmbiguousGrantByEmailAddress", 400,
                "The email address you provided is associated with more than one account."};
    case errc::acl_not_supported:
        return {"AccessControlListNotSupported", 400, "The bucket does not allow ACLs"};
    case errc::acl_with_object_ownership:
        return {"InvalidBucketAclWithObjectOwnership", 400,
                "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting"};
    case errc::no_such_public_access_block:
        return {"NoSuchPublicAccessBlockConfiguration", 404,
                "The public access block configuration was not found"};
    case errc::no_such_ownership_controls:
        return {"OwnershipControlsNotFoundError", 404, "The bucket ownership controls were not found"};
    case errc::no_such_encryption_configuration:
        return {"ServerSideEncryptionConfigurationNotFoundError", 404,
                "The server side encryption configuration was not found"};
    case errc::malformed_policy:
        return {"MalformedPolicy", 400, "Policies must be valid JSON and the first byte must be '{'"};
    case errc::no_such_bucket_policy:
        return {"NoSuchBucketPolicy", 404, "The bucket policy does not exist"};
    }
    // Only reachable with a value outside the enumeration.
    return {"InternalError", 500, "We encountered an internal error. Please try again."};
}

error_info describe(const error& err)
{
    const auto mapping = lookup(err.code);
    error_info info{.code = mapping.code,
                    .status = mapping.status,
                    .message = err.message.empty() ? std::string(mapping.message) : err.message,
                    .argument_name = {},
                    .argument_value = {}};
    const std::string_view argument = err.argument;
    if (const auto eq = argument.find('='); eq != std::string_view::npos) {
        info.argument_name = argument.substr(0, eq);
        info.argument_value = argument.substr(eq + 1);
    } else {
        info.argument_name = argument;
    }
    return info;
}

error argument_error(errc code, std::string message, std::string_view name, std::string_view value)
{
    std::string argument;
    argument.reserve(name.size() + 1 + value.size());
    argument.append(name).append("=").append(value);
    return make_error(code, std::move(message), std::move(argument));
}

std::string error_xml(const error_info& info, std::string_view resource, std::string_view request_id)
{
    xml_writer w;
    w.open("Error");
    w.element("Code", info.code);
    w.element("Message", info.message);
    if (info.argument_name == "HeadersNotSigned") {
        // S3 names the unsigned headers in an element of their own.
        w.element("HeadersNotSigned", info.argument_value);
    } else if (!info.argument_name.empty()) {
        w.element("ArgumentName", info.argument_name);
        w.element("ArgumentValue", info.argument_value);
    }
    w.element("Resource", resource);
    w.element("RequestId", request_id);
    return std::move(w).finish();
}

} // namespace depot::s3
