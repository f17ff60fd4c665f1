#pragma once
/// \file
/// S3 access control lists: canned ACLs (x-amz-acl), grant headers (x-amz-grant-*), the
/// AccessControlPolicy document of Get/PutBucketAcl and Get/PutObjectAcl, and the stored form of a grant
/// list. Pure: which user ids exist and what a grant lets a caller do are decided elsewhere (the server
/// resolves the facts, auth::authorize decides).
/// https://docs.aws.amazon.com/AmazonS3/latest/userguide/acl-overview.html
///
/// Grantees are Depot users (CanonicalUser, ID = the Depot user id) and the groups AllUsers and
/// AuthenticatedUsers. A grant by e-mail address (emailAddress=, AmazonCustomerByEmail) is parsed as a user
/// grant naming the address (acl_grant::email); the server resolves it to the user with that address before
/// anything is decided or stored. The LogDelivery group is refused as an invalid argument.

#include "common/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::s3 {

/// ACL permissions as bits (FULL_CONTROL is all four). The values are auth::acl_right's.
enum class acl_permission : std::uint8_t
{
    read = 1,
    write = 2,
    read_acp = 4,
    write_acp = 8,
    full_control = 15,
};

enum class grantee_type : std::uint8_t
{
    user,                ///< a Depot user (CanonicalUser)
    all_users,           ///< http://acs.amazonaws.com/groups/global/AllUsers: anyone, signed or not
    authenticated_users, ///< http://acs.amazonaws.com/groups/global/AuthenticatedUsers: any Depot user
};

inline constexpr std::string_view all_users_uri = "http://acs.amazonaws.com/groups/global/AllUsers";
inline constexpr std::string_view authenticated_users_uri =
    "http://acs.amazonaws.com/groups/global/AuthenticatedUsers";

struct acl_grant
{
    grantee_type type = grantee_type::user;
    std::string id; ///< the user id (type user only)
    acl_permission permission = acl_permission::read;
    /// A grant by e-mail address as the request named it, `id` empty until the server resolves it (type user
    /// only); never stored.
    std::string email;
    bool operator==(const acl_grant&) const = default;
};

/// An ACL: its grants, in order. The owner is the bucket's or the object version's, never stored here.
struct access_control_list
{
    std::vector<acl_grant> grants;
};

/// S3's limit: at most 100 grants in one ACL.
inline constexpr std::size_t max_acl_grants = 100;
/// The largest AccessControlPolicy body read (100 grants fit many times over).
inline constexpr std::size_t max_acl_body = 64 * 1024;

enum class canned_acl : std::uint8_t
{
    private_acl,
    public_read,
    public_read_write,
    authenticated_read,
    bucket_owner_read,
    bucket_owner_full_control,
};

/// The canned ACL named `name`; not_implemented for aws-exec-read and log-delivery-write (Depot has neither
/// EC2 nor log delivery), invalid_argument naming `argument` for anything else.
result<canned_acl> canned_acl_of(std::string_view name, std::string_view argument);

/// The grants of a canned ACL for a resource owned by `owner_id` in a bucket owned by `bucket_owner_id`
/// (bucket-owner-* add the bucket owner's grant on objects only, as S3 does).
access_control_list canned_grants(canned_acl acl, std::string_view owner_id, std::string_view bucket_owner_id,
                                  bool for_object);

/// The x-amz-grant-* header names with the permission each grants.
struct grant_header
{
    std::string_view name;
    acl_permission permission;
};
inline constexpr grant_header grant_headers[] = {
    {"x-amz-grant-read", acl_permission::read},
    {"x-amz-grant-write", acl_permission::write},
    {"x-amz-grant-read-acp", acl_permission::read_acp},
    {"x-amz-grant-write-acp", acl_permission::write_acp},
    {"x-amz-grant-full-control", acl_permission::full_control},
};

/// Appends the grants of one x-amz-grant-* header value (`id="u1", uri="http://acs...AllUsers"`) to `out`.
/// Errors: invalid_argument naming `header` for anything that is not a grantee, or more than max_acl_grants
/// grants in all.
result<void> parse_grant_header(std::string_view value, acl_permission permission, std::string_view header,
                                access_control_list& out);

/// A parsed AccessControlPolicy: the owner it names and its grants.
struct access_control_policy
{
    std::string owner_id;
    access_control_list acl;
};

/// Parses an AccessControlPolicy body. Errors: malformed_acl for bad XML, a wrong root, a missing Owner ID,
/// a grant without a grantee or with an unknown permission or grantee type, more than max_acl_grants grants;
/// invalid_argument for an unknown group URI.
result<access_control_policy> parse_access_control_policy(std::string_view body);

/// The AccessControlPolicy document GetBucketAcl and GetObjectAcl answer.
std::string access_control_policy_xml(const access_control_list& acl, std::string_view owner_id,
                                      std::string_view owner_display_name);

/// The stored form of a grant list (schema 0023): one grant a line, "<permission> <u|all|auth> [id]".
std::string stored_acl(const access_control_list& acl);
/// A stored grant list back; an unreadable line makes the whole list empty (grants nothing).
access_control_list acl_from_stored(std::string_view stored);

/// Whether the ACL grants anything to AllUsers or AuthenticatedUsers (S3 counts both as public).
bool is_public(const access_control_list& acl) noexcept;
/// Whether the ACL grants anything to a user other than `owner_id`.
bool grants_to_others(const access_control_list& acl, std::string_view owner_id) noexcept;
/// Whether the ACL is, in effect, the default: nothing granted to anyone but `owner_id`.
inline bool is_owner_only(const access_control_list& acl, std::string_view owner_id) noexcept
{
    return !is_public(acl) && !grants_to_others(acl, owner_id);
}

/// What an ACL grants, by grantee class, as bits of acl_permission.
struct acl_rights
{
    std::uint8_t user = 0;                ///< to the user asked about
    std::uint8_t all_users = 0;           ///< to AllUsers
    std::uint8_t authenticated_users = 0; ///< to AuthenticatedUsers
};
/// The ACL's rights for `user_id` ("" = an anonymous caller: none of its own).
acl_rights rights_of(const access_control_list& acl, std::string_view user_id) noexcept;

/// A PublicAccessBlockConfiguration as four flags: BlockPublicAcls, IgnorePublicAcls, BlockPublicPolicy,
/// RestrictPublicBuckets, each '0' or '1' ("1100": block and ignore public ACLs).
/// Errors: malformed_xml for bad XML, a wrong root, or a value other than true/false (absent: false).
result<std::string> parse_public_access_block(std::string_view body);
std::string public_access_block_xml(std::string_view flags);

/// The object ownership an OwnershipControls body sets (BucketOwnerEnforced, BucketOwnerPreferred,
/// ObjectWriter). Errors: malformed_xml for bad XML, not exactly one Rule, or another value.
result<std::string> parse_ownership_controls(std::string_view body);
std::string ownership_controls_xml(std::string_view ownership);
/// Whether `value` names an object ownership.
bool is_object_ownership(std::string_view value) noexcept;

} // namespace depot::s3
