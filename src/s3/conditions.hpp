#pragma once
/// \file
/// Conditional requests as S3 evaluates them (RFC 7232 section 6 order, which is also what the S3
/// GetObject/HeadObject/CopyObject references describe):
/// 1. If-Match, when present: false -> 412. When absent, If-Unmodified-Since: modified -> 412.
/// 2. If-None-Match, when present: a match -> 304. When absent, If-Modified-Since: not modified -> 304.
/// So If-Match true overrides a failing If-Unmodified-Since (200), and a matching If-None-Match answers 304
/// even when If-Modified-Since holds. The copy-source headers follow the same rules but answer 412
/// wherever GET answers 304. Dates compare at second precision; unparseable dates are ignored.
/// Write-side conditions (PutObject, CompleteMultipartUpload, CopyObject destination) are a separate
/// decision on the current object's existence and ETag.

#include "common/result.hpp"
#include "s3/types.hpp"

#include <optional>
#include <string_view>

namespace depot::s3 {

/// The conditional headers of a read (or their x-amz-copy-source-if-* twins). Absent headers are nullopt.
/// Views into the request; they must outlive the evaluation.
struct read_conditions
{
    std::optional<std::string_view> if_match = std::nullopt;
    std::optional<std::string_view> if_none_match = std::nullopt;
    std::optional<std::string_view> if_modified_since = std::nullopt;
    std::optional<std::string_view> if_unmodified_since = std::nullopt;

    bool empty() const noexcept
    {
        return !if_match && !if_none_match && !if_modified_since && !if_unmodified_since;
    }
};

/// What a conditional read resolves to.
enum class condition_result
{
    proceed,
    not_modified,
    precondition_failed
};

/// Evaluates GET/HEAD conditions against the existing object with bare ETag `etag`.
condition_result evaluate_read_conditions(const read_conditions& conditions, std::string_view etag,
                                          time_point last_modified);

/// Evaluates x-amz-copy-source-if-* conditions against the copy source; never answers not_modified.
condition_result evaluate_copy_source_conditions(const read_conditions& conditions, std::string_view etag,
                                                 time_point last_modified);

/// proceed -> success; not_modified -> errc::not_modified; precondition_failed -> errc::precondition_failed.
result<void> to_result(condition_result outcome);

/// True when the comma-separated entity-tag list `header` ("*", `"a"`, `W/"b"`, or bare tags, which S3
/// accepts) contains `etag`. With `weak`, W/ tags match too (If-None-Match); without, only strong tags
/// match (If-Match).
bool etag_list_matches(std::string_view header, std::string_view etag, bool weak);

/// The conditional headers of a write.
struct write_conditions
{
    std::optional<std::string_view> if_match = std::nullopt;
    std::optional<std::string_view> if_none_match = std::nullopt;
};

/// Whether an If-Range `validator` (RFC 9110 section 13.1.5) still names the representation with bare ETag
/// `etag` and `last_modified`: a strong entity tag equal to it, or an HTTP date equal to Last-Modified (at
/// second precision). When it does not, the Range is ignored and the whole representation is sent.
bool if_range_holds(std::string_view validator, std::string_view etag, time_point last_modified);

/// Decides a conditional write. `current_etag` is the bare ETag of the object the write would replace, or
/// nullopt when there is none (no object, or its current version is a delete marker).
/// - If-Match may not accompany If-None-Match: not_implemented, as S3;
/// - If-None-Match: * with a current object, or a list of ETags naming the current one (radosgw's and
///   MinIO's reading; AWS answers 501 for anything but *) -> precondition_failed;
/// - If-Match without a current object -> no_such_key; with a different ETag -> precondition_failed
///   ("*" matches any current object).
result<void> evaluate_write_conditions(const write_conditions& conditions,
                                       std::optional<std::string_view> current_etag);

} // namespace depot::s3
