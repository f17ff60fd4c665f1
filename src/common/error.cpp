#include "common/error.hpp"

namespace depot {

std::string_view to_string(errc code) noexcept
{
    switch (code) {
    case errc::invalid_argument:
        return "invalid_argument";
    case errc::not_found:
        return "not_found";
    case errc::already_exists:
        return "already_exists";
    case errc::conflict:
        return "conflict";
    case errc::precondition_failed:
        return "precondition_failed";
    case errc::not_modified:
        return "not_modified";
    case errc::access_denied:
        return "access_denied";
    case errc::unavailable:
        return "unavailable";
    case errc::io_error:
        return "io_error";
    case errc::too_large:
        return "too_large";
    case errc::not_implemented:
        return "not_implemented";
    case errc::internal:
        return "internal";
    case errc::no_such_bucket:
        return "no_such_bucket";
    case errc::no_such_key:
        return "no_such_key";
    case errc::no_such_upload:
        return "no_such_upload";
    case errc::no_such_version:
        return "no_such_version";
    case errc::bucket_already_exists:
        return "bucket_already_exists";
    case errc::bucket_already_owned_by_you:
        return "bucket_already_owned_by_you";
    case errc::bucket_not_empty:
        return "bucket_not_empty";
    case errc::invalid_bucket_name:
        return "invalid_bucket_name";
    case errc::invalid_object_name:
        return "invalid_object_name";
    case errc::invalid_range:
        return "invalid_range";
    case errc::bad_digest:
        return "bad_digest";
    case errc::invalid_digest:
        return "invalid_digest";
    case errc::malformed_xml:
        return "malformed_xml";
    case errc::entity_too_small:
        return "entity_too_small";
    case errc::entity_too_large:
        return "entity_too_large";
    case errc::invalid_part:
        return "invalid_part";
    case errc::invalid_part_order:
        return "invalid_part_order";
    case errc::invalid_request:
        return "invalid_request";
    case errc::method_not_allowed:
        return "method_not_allowed";
    case errc::missing_content_length:
        return "missing_content_length";
    case errc::incomplete_body:
        return "incomplete_body";
    case errc::invalid_storage_class:
        return "invalid_storage_class";
    case errc::invalid_access_key_id:
        return "invalid_access_key_id";
    case errc::signature_does_not_match:
        return "signature_does_not_match";
    case errc::request_time_too_skewed:
        return "request_time_too_skewed";
    case errc::expired_presigned_request:
        return "expired_presigned_request";
    case errc::authorization_header_malformed:
        return "authorization_header_malformed";
    case errc::authorization_query_parameters_error:
        return "authorization_query_parameters_error";
    case errc::content_sha256_mismatch:
        return "content_sha256_mismatch";
    case errc::missing_security_header:
        return "missing_security_header";
    case errc::key_too_long:
        return "key_too_long";
    case errc::metadata_too_large:
        return "metadata_too_large";
    case errc::invalid_tag:
        return "invalid_tag";
    case errc::invalid_part_number:
        return "invalid_part_number";
    case errc::rate_limited:
        return "rate_limited";
    case errc::invalid_location_constraint:
        return "invalid_location_constraint";
    }
    return "unknown";
}

} // namespace depot
