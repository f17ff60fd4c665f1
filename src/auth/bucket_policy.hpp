#pragma once
/// \file
/// S3 bucket policies (PutBucketPolicy): the JSON document's parser and its evaluator. Pure: no I/O.
///
/// The subset Depot understands (anything else is refused with MalformedPolicy, never ignored):
/// - Version "2012-10-17" or "2008-10-17" (or none), Id; Statement as an object or a non-empty array;
/// - per statement: Sid, Effect Allow|Deny, Principal ("*", {"AWS": "*" | id | arn | [...]},
///   {"CanonicalUser": id | [...]}), Action or NotAction (s3:*, wildcards * and ?), Resource or NotResource
///   (arn:aws:s3:::<bucket> and arn:aws:s3:::<bucket>/<key pattern>, only the policy's own bucket),
///   Condition; NotPrincipal is refused;
/// - a Depot user is named by its user id, plain or as arn:aws:iam::<any account>:user/<user id>;
/// - condition operators: String(Not)Equals(IgnoreCase), String(Not)Like, Numeric*, Date*, Bool, IpAddress,
///   NotIpAddress, Null, each with the ...IfExists form; ForAnyValue:/ForAllValues: are refused;
/// - condition keys: aws:SourceIp, aws:SecureTransport, aws:username, aws:userid, aws:CurrentTime,
///   aws:EpochTime, s3:prefix, s3:delimiter, s3:max-keys, s3:x-amz-server-side-encryption,
///   s3:x-amz-server-side-encryption-customer-algorithm, s3:x-amz-acl, s3:VersionId.
///
/// Evaluation (AWS's): an explicit Deny of a matching statement wins; else a matching Allow allows; else the
/// policy says nothing. What a decision then makes of it is auth::authorize's (auth/authorize.hpp).

#include "common/result.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace depot::auth {

/// The largest policy document S3 accepts (20 KB).
inline constexpr std::size_t max_bucket_policy_bytes = 20 * 1024;

struct policy_condition
{
    std::string op;  ///< the operator without IfExists, e.g. "StringEquals"
    std::string key; ///< lower-cased, e.g. "aws:sourceip"
    std::vector<std::string> values;
    bool if_exists = false;
};

struct policy_statement
{
    std::string sid;
    bool allow = true;
    bool any_principal = false;     ///< "*" or {"AWS": "*"}
    std::vector<std::string> users; ///< Depot user ids
    bool not_action = false;
    std::vector<std::string> actions; ///< lower-cased patterns, e.g. "s3:get*"
    bool not_resource = false;
    /// Patterns of what follows "arn:aws:s3:::" ("bucket" or "bucket/key-pattern").
    std::vector<std::string> resources;
    std::vector<policy_condition> conditions;
    /// Public in effect, judged over the whole policy (set by parse_bucket_policy, see is_public): an Allow
    /// to every principal that no fixed aws:userid narrows, and whose aws:SourceIp networks, together with
    /// those of the policy's other such statements, admit more than a narrow set of addresses.
    bool public_in_effect = false;
};

struct bucket_policy
{
    std::vector<policy_statement> statements;
};

/// Parses and validates `json` as the policy of `bucket`. malformed_policy with S3's message otherwise.
result<bucket_policy> parse_bucket_policy(std::string_view json, std::string_view bucket);

/// The user ids a policy names (PutBucketPolicy checks that each exists).
std::vector<std::string> named_users(const bucket_policy& p);

/// The most addresses a policy's aws:SourceIp networks may admit and still narrow who can use it: one IPv4 /8
/// (2^24 addresses, IPv4-mapped IPv6 and the NAT64 prefixes counted as IPv4) and one IPv6 /32 (2^96
/// addresses) outside IPv4. AWS calls a policy non-public when it "limits access to a set of CIDRs" without
/// saying how large; Depot counts the union of every range the policy's statements to everyone admit, so
/// neither `::/1` (which holds all of IPv4-mapped space), nor `0.0.0.0/1` + `128.0.0.0/1`, nor 256 statements
/// of one /8 each pass for private.
inline constexpr unsigned narrow_ipv4_prefix = 8;
inline constexpr unsigned narrow_ipv6_prefix = 32;

/// A statement is public on its own when it Allows every principal without a condition that narrows who can
/// use it: aws:userid with fixed values, or aws:SourceIp (IpAddress, not ...IfExists) with networks that
/// admit no more than the narrow limits above.
bool is_public(const policy_statement& s);
/// GetBucketPolicyStatus's IsPublic, BlockPublicPolicy's and RestrictPublicBuckets' judgement: some statement
/// is public in effect, the aws:SourceIp networks of all statements to everyone counted together.
bool is_public(const bucket_policy& p);

/// The request as a policy sees it.
struct policy_request
{
    std::string_view action; ///< the AWS action, e.g. "s3:GetObject"
    std::string_view bucket;
    /// The object key for object actions (the resource is then arn:aws:s3:::bucket/key); unused otherwise.
    std::string_view key;
    bool object_action = false;
    std::string_view user_id; ///< empty: anonymous
    /// Condition values present in the request, keys lower-cased ("aws:sourceip", "s3:prefix", ...).
    std::span<const std::pair<std::string_view, std::string>> context;
    /// Allows count only when they name the action without a wildcard (sensitive actions: DeleteBucket, the
    /// bucket's access settings). Denies always count.
    bool exact_allow_only = false;
    /// Public statements' Allows are void (RestrictPublicBuckets, or the installation allows no public
    /// access).
    bool ignore_public = false;
};

enum class policy_effect
{
    none,
    allow,
    deny,
};

policy_effect evaluate(const bucket_policy& p, const policy_request& r);

/// Whether some Allow statement names the request's user and action (whatever its resources and
/// conditions): DeleteObjects goes on to decide each key with evaluate() when one could allow some key.
bool may_allow(const bucket_policy& p, const policy_request& r);

/// `*` and `?` glob matching (as in policy actions, resources and StringLike).
bool policy_glob(std::string_view pattern, std::string_view text, bool ignore_case = false);

/// Whether `action` (e.g. "s3:GetObject") is an S3 action Depot knows, and whether it applies to objects.
struct known_action
{
    std::string_view name;
    bool object = false;
};
std::span<const known_action> known_s3_actions();

} // namespace depot::auth
