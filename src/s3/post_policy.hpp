#pragma once
/// \file
/// POST Object's policy document (AWS: "Creating a POST Policy"): the base64 JSON object with an
/// `expiration` (ISO 8601) and `conditions`, each an exact match `{"field": "value"}`, `["eq", "$field",
/// "value"]`, `["starts-with", "$field", "prefix"]` or `["content-length-range", min, max]`. Pure.
///
/// S3's rules, applied by check_post_policy:
/// - the policy has not expired;
/// - every condition holds (field names compare case-insensitively; `bucket` is the request's bucket; a
///   starts-with on Content-Type holds for each value of a comma-separated list);
/// - every form field but the exempt ones (policy, file, x-amz-signature, and SigV2's AWSAccessKeyId and
///   signature, and names starting with x-ignore-) is named by some condition.

#include "common/result.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace depot::s3 {

struct policy_condition
{
    enum class kind
    {
        eq,
        starts_with,
        content_length_range,
    };
    kind what = kind::eq;
    std::string field; ///< lower-case, without the '$'
    std::string value;
    std::uint64_t min = 0;
    std::uint64_t max = 0;
    std::string text; ///< as S3 quotes it in a refusal: ["eq", "$key", "value"]
};

struct post_policy
{
    std::chrono::system_clock::time_point expiration;
    std::vector<policy_condition> conditions;
};

/// Parses the decoded policy document. Errors: invalid_argument "Invalid Policy: ..." (not JSON, no
/// expiration or conditions, an unknown or malformed condition).
result<post_policy> parse_post_policy(std::string_view json);

/// A form field as the policy sees it: lower-case name, value (the key with ${filename} replaced).
using form_field = std::pair<std::string, std::string>;

/// The object size range the policy allows (content-length-range; several narrow each other).
struct size_range
{
    std::uint64_t min = 0;
    std::optional<std::uint64_t> max;
};

/// Checks the form against the policy (see the file comment). Errors, with S3's messages:
/// access_denied "Invalid according to Policy: Policy expired.", "... Policy Condition failed: [...]",
/// "... Extra input fields: name".
result<size_range> check_post_policy(const post_policy& policy, const std::vector<form_field>& fields,
                                     std::string_view bucket, std::chrono::system_clock::time_point now);

/// Whether a (lower-case) field needs no condition.
bool is_policy_exempt(std::string_view field) noexcept;

} // namespace depot::s3
