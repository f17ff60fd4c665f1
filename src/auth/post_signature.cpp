#include "auth/post_signature.hpp"

#include "auth/sigv2.hpp"
#include "auth/sigv4_detail.hpp"
#include "common/hash.hpp"
#include "common/http_date.hpp"

namespace depot::auth {
namespace {

const std::string* find(const std::vector<std::pair<std::string, std::string>>& fields, std::string_view name)
{
    for (const auto& [n, v] : fields)
        if (n == name)
            return &v;
    return nullptr;
}

error missing(std::string_view field)
{
    return make_error(errc::invalid_argument,
                      "Bucket POST must contain a field named '" + std::string(field) +
                          "'.  If it is specified, please check the order of the fields.",
                      std::string(field));
}

bool printable(std::string_view s) noexcept
{
    for (char c : s)
        if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f)
            return false;
    return !s.empty();
}

} // namespace

result<std::optional<post_credentials>>
parse_post_credentials(const std::vector<std::pair<std::string, std::string>>& fields,
                       std::string_view region)
{
    const auto* v4_signature = find(fields, "x-amz-signature");
    const auto* credential = find(fields, "x-amz-credential");
    const auto* algorithm = find(fields, "x-amz-algorithm");
    const auto* v2_signature = find(fields, "signature");
    const auto* key_id = find(fields, "awsaccesskeyid");
    const auto* policy = find(fields, "policy");
    if (!v4_signature && !credential && !algorithm && !v2_signature && !key_id)
        return std::optional<post_credentials>{};
    post_credentials out;
    if (v4_signature || credential || algorithm) {
        if (v2_signature || key_id)
            return make_error(errc::invalid_argument,
                              "Only one auth mechanism allowed; only the X-Amz-Algorithm "
                              "field or the AWSAccessKeyId field may be specified");
        if (!algorithm)
            return missing("x-amz-algorithm");
        if (*algorithm != "AWS4-HMAC-SHA256")
            return make_error(errc::invalid_argument, "X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\"",
                              "x-amz-algorithm");
        if (!credential)
            return missing("x-amz-credential");
        const auto* date = find(fields, "x-amz-date");
        if (!date)
            return missing("x-amz-date");
        if (!v4_signature)
            return missing("x-amz-signature");
        if (!policy)
            return missing("policy");
        auto parsed = detail::parse_credential(*credential);
        if (!parsed || !printable(parsed->first))
            return make_error(errc::invalid_argument,
                              "Invalid credential: expected <key>/<YYYYMMDD>/<region>/s3/aws4_request",
                              "x-amz-credential");
        auto when = parse_amz_date(*date);
        if (!when)
            return make_error(errc::invalid_argument, "Invalid x-amz-date: expected YYYYMMDDTHHMMSSZ",
                              "x-amz-date");
        if (date->substr(0, 8) != parsed->second.date)
            return make_error(errc::invalid_argument,
                              "Invalid credential date: it must be the day of x-amz-date (" +
                                  date->substr(0, 8) + ")",
                              "x-amz-credential");
        if (parsed->second.region != region)
            return make_error(errc::invalid_argument,
                              "Invalid credential: the region '" + parsed->second.region +
                                  "' is wrong; expecting '" + std::string(region) + "'",
                              "x-amz-credential");
        if (parsed->second.service != "s3")
            return make_error(errc::invalid_argument,
                              "Invalid credential: the service must be s3, not '" + parsed->second.service +
                                  "'",
                              "x-amz-credential");
        if (v4_signature->size() != 64 || !detail::is_hex(*v4_signature))
            return make_error(
                errc::signature_does_not_match,
                "The request signature we calculated does not match the signature you provided.");
        out.version = 4;
        out.access_key_id = std::move(parsed->first);
        out.scope = std::move(parsed->second);
        out.date = *when;
        out.signature = *v4_signature;
    } else {
        if (!key_id)
            return missing("AWSAccessKeyId");
        if (!v2_signature)
            return missing("signature");
        if (!policy)
            return missing("policy");
        if (!printable(*key_id))
            return make_error(errc::invalid_argument, "Invalid AWSAccessKeyId", "AWSAccessKeyId");
        out.version = 2;
        out.access_key_id = *key_id;
        out.signature = *v2_signature;
    }
    out.policy = *policy;
    return std::optional<post_credentials>(std::move(out));
}

std::string post_policy_signature_v4(std::string_view secret, const credential_scope& scope,
                                     std::string_view policy_b64)
{
    return signature(signing_key(secret, scope), policy_b64);
}

result<void> verify_post_signature(const post_credentials& c, std::string_view secret)
{
    std::string expected;
    std::string given = c.signature;
    if (c.version == 4) {
        expected = post_policy_signature_v4(secret, c.scope, c.policy);
        for (auto& ch : given)
            ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    } else {
        expected = sigv2::signature(secret, c.policy);
    }
    if (!constant_time_equal(expected, given))
        return make_error(errc::signature_does_not_match,
                          "The request signature we calculated does not match the signature you provided. "
                          "Check your key and signing method.");
    return ok();
}

} // namespace depot::auth
