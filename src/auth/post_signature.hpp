#pragma once
/// \file
/// The credentials of a POST Object form (browser uploads): the policy document is what is signed.
/// - SigV4 ("Browser-Based Uploads Using POST"): fields x-amz-algorithm (AWS4-HMAC-SHA256),
///   x-amz-credential (<key>/<YYYYMMDD>/<region>/s3/aws4_request), x-amz-date (YYYYMMDDTHHMMSSZ, of the
///   credential's day) and x-amz-signature = hex(HMAC-SHA256(signing key, base64 policy)).
/// - SigV2: fields AWSAccessKeyId and signature = base64(HMAC-SHA1(secret, base64 policy)).
/// Same pattern as sigv4.hpp: `parse_post_credentials` extracts and validates, the caller looks the secret
/// up, `verify_post_signature` checks. Pure and thread-safe.

#include "auth/sigv4.hpp"
#include "common/result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace depot::auth {

struct post_credentials
{
    int version = 4; ///< 4 or 2
    std::string access_key_id;
    std::string signature;                      ///< as sent (hex for SigV4, base64 for SigV2)
    credential_scope scope;                     ///< SigV4
    std::chrono::system_clock::time_point date; ///< SigV4: x-amz-date
    std::string policy;                         ///< the base64 policy, as signed
};

/// `fields`: the form's fields before the file, lower-case names. nullopt when the form carries no
/// credentials at all (an anonymous POST). Errors: invalid_argument naming the missing or malformed field
/// ("Bucket POST must contain a field named 'policy'. ..."), for a credential scope of another region or
/// service, or an x-amz-date of another day than the credential's.
result<std::optional<post_credentials>>
parse_post_credentials(const std::vector<std::pair<std::string, std::string>>& fields,
                       std::string_view region);

/// Constant-time check of the signature over the policy. Errors: signature_does_not_match.
result<void> verify_post_signature(const post_credentials& credentials, std::string_view secret);

/// Client side (tests): the SigV4 signature of a base64 policy.
std::string post_policy_signature_v4(std::string_view secret, const credential_scope& scope,
                                     std::string_view policy_b64);

} // namespace depot::auth
