#pragma once
/// \file
/// The one place where Depot decides who may do what: `authorize(principal, permission, resource)`.
///
/// Pure: no I/O, no SQL, no HTTP. The server resolves what a decision needs once per request (the
/// principal after authentication: user, installation-admin flag, parsed scope; the caller's role in a
/// team; a bucket's owner; where a scoped model lives) and asks here. Every route of every table (S3 in
/// server/dispatch.cpp, REST in server/api/api.cpp, the Hugging Face API in server/hf/hf.cpp) names its
/// `permission`; the route's permission, not its name, is what the rules below look at.
///
/// The rules, in the order they apply:
/// - **Scope** (auth/scope.hpp): a credential narrowed to read-only, a bucket [+ prefix], a model, or a
///   model's alias only narrows; it never grants. Resources a request reaches besides its path (a copy
///   source, a digest's source objects, a restore target) are checked against it too (`key_area`).
/// - **Read-only views**: the models bucket and a bucket's `.snapshots/` serve reads only.
/// - **Bucket ownership**: a bucket belongs to the user who created it; installation admins reach all.
/// - **Team roles**: reader < writer < maintainer < admin; an installation admin counts as a team admin;
///   a caller outside the team learns nothing about it (not_found).
/// - **Installation admin**: users, teams, other users' credentials.
///
/// Denials are access_denied (or not_found where the rule hides existence); the message says why.

#include "auth/bucket_policy.hpp"
#include "auth/scope.hpp"
#include "common/result.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace depot::auth {

enum class team_role
{
    reader = 1,     ///< reads models, versions and files
    writer = 2,     ///< creates models and versions, submits versions
    maintainer = 3, ///< approves, rejects, deprecates, archives, moves aliases
    admin = 4,      ///< manages members, webhooks and model policies
};

std::optional<team_role> team_role_of(std::string_view name) noexcept;
std::string_view to_string(team_role role) noexcept;

/// Who asks, resolved once per request after authentication.
struct principal
{
    std::string user_id;
    /// The user's installation-admin flag (whatever the credential).
    bool installation_admin = false;
    /// The credential's scope; nullopt when it does not narrow anything.
    std::optional<access_scope> scope;
    /// The stored scope could not be parsed: the credential reaches nothing.
    bool scope_unreadable = false;
};

/// A principal from the authenticated user and the credential's stored scope ("" = not narrowed).
principal make_principal(std::string user_id, bool installation_admin, std::string_view scope_json);

/// What an operation does. One per kind of operation, not per route: routes that need the same thing
/// share one. Each has a fixed read/write nature (reads: every GET and HEAD route, and nothing else except
/// the Hugging Face paths-info POST) and, for team resources, the least team role it needs.
enum class permission : std::uint8_t
{
    // S3 (server/dispatch.cpp)
    list_buckets,     ///< ListBuckets: lists only the bucket the scope reaches
    create_bucket,    ///< CreateBucket
    delete_bucket,    ///< DeleteBucket
    read_bucket,      ///< HeadBucket, GetBucketLocation, GetBucketVersioning: reachable from a prefix scope
    read_bucket_acl,  ///< GetBucketAcl/Cors/Tagging/ObjectLockConfiguration (not from a prefix scope)
    configure_bucket, ///< PutBucketVersioning, Put/DeleteBucketCors/Tagging, PutObjectLockConfiguration
    list_objects,     ///< ListObjects, ListObjectsV2 (the path checked is the listing's prefix)
    list_object_versions,  ///< ListObjectVersions
    list_uploads,          ///< ListMultipartUploads
    delete_objects,        ///< DeleteObjects
    read_object,           ///< GetObject, HeadObject (an alias scope reads the frozen file); a copy's source
    read_object_metadata,  ///< GetObjectAcl/Attributes/Tagging/Retention/LegalHold, ListParts
    write_object,          ///< PutObject, CopyObject, DeleteObject, multipart uploads
    write_object_metadata, ///< Put/DeleteObjectTagging: a write of the key, never in the read-only views
                           /// PutObjectRetention, PutObjectLegalHold: a write of the key (never in the
                           /// read-only views nor with an alias scope); what a lock then forbids is the
                           /// registry's (registry/repo/object_lock.hpp). Bypassing GOVERNANCE retention is
                           /// a fact of the request, not a permission (s3_target / bucket_resource
                           /// `bypass_governance`).
    write_object_lock,
    read_acl,  ///< GetBucketAcl, GetObjectAcl: the owner, or a READ_ACP grant
    write_acl, ///< PutBucketAcl, PutObjectAcl: the owner, or a WRITE_ACP grant

    /// OPTIONS: a browser's CORS preflight, answered before authentication from the bucket's CORS
    /// configuration (server/s3/cors_preflight.cpp); authorize() refuses it, nothing should ask.
    cors_preflight,

    // REST (server/api/api.cpp)
    whoami, ///< whoami, getCurrentSession: any credential, whatever its scope
            /// createSession: unauthenticated (the handler checks the credential the body names; a session
            /// acts with that credential's permissions); authorize() refuses it, nothing should ask.
    session_start,
    session_end,           ///< deleteCurrentSession: a session ends itself, whatever its credential's scope
    account_read,          ///< the caller's own usage, tokens and keys (another user's: installation admins)
    audit_read,            ///< listAudit: installation admins, and team admins for their teams' rows
    account_write,         ///< the caller's own tokens and keys; content lookup
    users_read,            ///< listUsers: installation admins
    users_write,           ///< createUser: installation admins
    bucket_info_read,      ///< a bucket's settings, usage, snapshots (owner or installation admin)
                           ///< scope)
    bucket_info_write,     ///< a bucket's settings and snapshots, objects created from a digest
    teams_list,            ///< listTeams: the caller's teams
    team_create,           ///< createTeam: installation admins
    team_read,             ///< getTeam: reader (a model scope may read its model's team)
    team_contents_read,    ///< members, models, team warm-up policy: reader
    team_members_write,    ///< set or remove a member: admin
    team_policy_write,     ///< team warm-up policy: admin
    model_create,          ///< createModel: writer
    webhooks_read,         ///< a team's webhooks and deliveries: admin
    webhooks_write,        ///< create, change, rotate, ping, redeliver webhooks: admin
    model_read,            ///< model, alias, version, its files and manifest: reader (alias scopes too)
    model_history_read,    ///< history, versions, diffs, aliases, warm-ups: reader
    model_update,          ///< updateModel: writer
    model_policy_write,    ///< a model's warm-up policy: admin
    approval_policy_write, ///< a model's approval policy (part of updateModel): admin
    version_create,        ///< createVersion, submitVersion, createWarmup: writer
    version_review,        ///< approve, reject: the model policy's approver role (at least reader)
    version_retire,        ///< deprecate, archive: maintainer
    alias_write,           ///< set or delete an alias: maintainer

    // The Hugging Face Hub API (server/hf/hf.cpp)
    hf_read, ///< model info, tree, paths-info, resolve: reader of the model's team
};

/// A route table's permission column: no default, so a route without one does not compile.
struct route_permission
{
    permission value;
    constexpr route_permission(permission p) noexcept : value(p) {} // NOLINT: implicit on purpose
};

/// The permission's name (for tests and messages).
std::string_view to_string(permission p) noexcept;
/// Whether the permission only reads.
bool is_read(permission p) noexcept;
/// The least team role a team-resource permission needs (reader for permissions about no team).
team_role required_role(permission p) noexcept;
/// Every permission, for tests that enumerate them.
std::span<const permission> all_permissions() noexcept;

// --- Resources: what the request reaches, with the facts a decision needs (resolved by the caller) ------

/// An S3 request's own target: `bucket`, and `path` (the object key; a listing's prefix; empty for other
/// bucket-level and service-level operations).
struct s3_target
{
    std::string_view operation; ///< the AWS action, for messages
    std::string_view bucket;
    std::string_view path;
    bool models_view = false;  ///< `bucket` is the models bucket (the read-only view)
    bool snapshot_key = false; ///< `path` is under .snapshots/
    bool version_id = false;   ///< the request names an object version
    /// For a model scope outside the models view: where the scope's model lives (nullptr: it is gone).
    const model_location* scope_model = nullptr;
    /// For an alias scope reading inside its model's prefix: whether the path is a file of the aliased
    /// version (relative to the model's prefix, auth::alias_file_path).
    bool alias_file = false;
    /// CopyObject, UploadPartCopy: the source the request reads (checked as read_object).
    const s3_target* copy_source = nullptr;
    /// The request asks to bypass GOVERNANCE retention (x-amz-bypass-governance-retention: true on
    /// DeleteObject, DeleteObjects or PutObjectRetention): the credential must reach the whole bucket (not
    /// read-only, not narrowed to a prefix, a model or an alias). Who may bypass is bucket_resource's.
    bool bypass_governance = false;
};

/// ACL rights as bits (s3/acl.hpp's acl_permission has the same values).
namespace acl_right {
inline constexpr std::uint8_t read = 1;
inline constexpr std::uint8_t write = 2;
inline constexpr std::uint8_t read_acp = 4;
inline constexpr std::uint8_t write_acp = 8;
} // namespace acl_right

/// What ACLs grant the caller, by grantee class (the server reads the ACLs; the rules below decide what
/// counts). Each field: bits of acl_right.
struct acl_grants
{
    std::uint8_t user = 0;                ///< to the caller by user id
    std::uint8_t all_users = 0;           ///< to AllUsers (anyone, signed or not)
    std::uint8_t authenticated_users = 0; ///< to AuthenticatedUsers (any Depot user)
};

/// A bucket row: ownership decides; ACL grants and the bucket policy add rights for other callers, within the
/// rules:
/// - the bucket policy's explicit Deny (auth/bucket_policy.hpp) comes first and applies to everyone, the
/// owner
///   and installation admins included, except that they may always Get/Put/DeleteBucketPolicy (nobody locks
///   themselves out);
/// - the owner and installation admins reach everything; an anonymous caller (empty user id) owns nothing;
/// - a bucket in which models live is governed by team roles alone: its grants are void;
/// - under BucketOwnerEnforced (`acls_disabled`) every grant is void;
/// - public grants (AllUsers, AuthenticatedUsers) are void when `ignore_public` (IgnorePublicAcls, or the
///   installation does not allow public access);
/// - an anonymous caller only ever reads (a public WRITE grant is honoured for Depot users only);
/// - a policy's Allow counts like a grant, for the action it names (bucket_resource::request): void in a
///   bucket in which models live, public statements void when `ignore_public_policy` (RestrictPublicBuckets,
///   or the installation does not allow public access); it never grants Get/Put/DeleteBucketPolicy (the
///   owner's and installation admins' alone), and grants the sensitive actions (s3:DeleteBucket, the
///   bucket's PublicAccessBlock, ownership controls and Object Lock configuration,
///   s3:BypassGovernanceRetention) only to statements naming them without a wildcard.
/// - a view only the owner reaches (`owner_only`: a bucket's snapshots) is refused to everyone else, whatever
///   a grant or an Allow says; the policy's Denies about what it serves still bind the owner.
/// What a permission needs: list_objects, list_object_versions, list_uploads and read_bucket the bucket's
/// READ; write_object and delete_objects the bucket's WRITE; read_object the object's READ (or, when the
/// object was looked up and does not exist, the bucket's READ: the caller may learn that from a listing
/// anyway, and the operation answers 404); read_acl and
/// write_acl READ_ACP and WRITE_ACP of the object (`object` set) or the bucket. Everything else: the owner.
/// A request that asks to bypass GOVERNANCE retention (`bypass_governance`) needs, besides its permission,
/// the bucket's owner, an installation admin, or a policy statement that names
/// s3:BypassGovernanceRetention without a wildcard (`s3:*` does not count, unlike on AWS) for the key; a
/// policy Deny of it binds everyone; no ACL grant ever allows it.
struct bucket_resource
{
    std::string_view name;
    std::string_view owner_id;
    bool has_models = false;
    bool acls_disabled = false;
    bool ignore_public = false;
    acl_grants bucket_grants{};
    /// For object permissions: the object version's grants (nullopt: not read, or no such object).
    std::optional<acl_grants> object_grants = std::nullopt;
    /// The object was looked up and does not exist (or is a delete marker).
    bool object_missing = false;
    bool object = false; ///< the request addresses an object (read_acl / write_acl: the object's ACL)
    /// The bucket's policy (nullptr: none) and the request as the policy sees it (an empty action: the
    /// policy is not consulted). `request.user_id`, `exact_allow_only` and `ignore_public` are set here.
    const bucket_policy* policy = nullptr;
    policy_request request{};
    bool ignore_public_policy = false;
    /// The request asks to bypass GOVERNANCE retention (x-amz-bypass-governance-retention: true on
    /// DeleteObject, DeleteObjects or PutObjectRetention). DeleteObjects as a whole (`object` unset) goes on
    /// when the policy may allow the bypass for some key; each key then decides.
    bool bypass_governance = false;
    /// The request reads a view of the bucket that only its owner and installation admins reach (its
    /// snapshots, `.snapshots/<name>/<key>`): ACL grants and policy Allows do not count. The caller sets
    /// `request.key` (and a listing's s3:prefix) to what the view serves, so the policy's Denies hold there
    /// exactly as on the live key.
    bool owner_only = false;
    /// The request deletes an object version for good (s3:DeleteObjectVersion): a WRITE grant does not
    /// allow it, as on AWS (a grantee adds versions and delete markers; the owner's history stays), only
    /// the owner or a policy Allow.
    bool deletes_version = false;
    /// The request acts on a multipart upload that another user initiated (UploadPart, UploadPartCopy,
    /// CompleteMultipartUpload, AbortMultipartUpload): a WRITE grant lets a grantee run its own uploads,
    /// not add parts to, complete or abort someone else's. Only the bucket's owner or a policy Allow does.
    bool others_upload = false;
};

/// The AWS actions only a bucket's owner and installation admins perform whatever a policy says.
bool is_policy_management(std::string_view action) noexcept;
/// The AWS actions a policy grants only by naming them without a wildcard.
bool is_sensitive_action(std::string_view action) noexcept;

/// An ACL being set on a bucket or an object (write_acl, or a write with x-amz-acl / x-amz-grant-*): the
/// facts its refusal needs. Refused with access_denied: public grants when public access is blocked (the
/// bucket's BlockPublicAcls, or the installation's option), and any grant to others than the bucket's owner
/// in a bucket in which models live (team roles govern it: team isolation holds).
struct acl_change
{
    std::string_view bucket;
    bool has_models = false;
    bool block_public = false;
    bool public_grants = false;  ///< the ACL grants AllUsers or AuthenticatedUsers
    bool other_grantees = false; ///< the ACL grants some user other than the owner
};

/// Keys under `prefix` of `bucket` a request reaches besides its path (a copy source is an s3_target with
/// read_object instead): a restore's source and target, an object created from a digest.
struct key_area
{
    std::string_view bucket;
    std::string_view prefix;
    /// For a model scope: where the scope's model lives (nullptr: it is gone).
    const model_location* scope_model = nullptr;
    /// The keys as a snapshot of the bucket holds them (a version made from a snapshot, a restore's
    /// source): a model's scope never reaches the bucket's snapshots, also over the whole bucket.
    bool snapshot = false;
};

/// A REST call's target, as its path parameters name it (empty: the path has no such parameter).
struct api_target
{
    std::string_view bucket;
    std::string_view team;
    std::string_view model;
    std::string_view alias;
    std::string_view version;
};

/// A team, with the caller's role in it (nullopt: not a member).
struct team_resource
{
    std::string_view name;
    std::optional<team_role> role;
    /// Raises the permission's least role (version_review: the model policy's approver role).
    std::optional<team_role> policy_role;
};

/// A model of the Hugging Face API: `team/model`, and for an alias scope whether the revision asked for
/// is the version its alias points to now (nullopt: not yet resolved).
struct hf_model
{
    std::string_view team;
    std::string_view model;
    std::optional<bool> alias_version = std::nullopt;
};

/// Something that belongs to a user (credentials, usage): `owner_id`.
struct user_resource
{
    std::string_view owner_id;
};

/// A multipart upload a model version is created from: only its initiator publishes it (in their name),
/// installation admins included.
struct upload_resource
{
    std::string_view owner_id;
};

/// The installation itself (users, teams, the whole audit log). `team_admin_somewhere`: the caller is the
/// admin of at least one team (reads its teams' audit rows).
struct installation
{
    bool team_admin_somewhere = false;
};

/// A scope being granted to a credential of `principal` (account_write): the scope's bucket must be the
/// principal's own (installation admins included), its model one of a team the principal reaches. The
/// refusals are invalid_argument naming `scope`.
struct granted_scope
{
    const access_scope* scope = nullptr;
    std::string_view bucket_owner_id;         ///< owner of the scope's bucket ("" when it does not exist)
    std::optional<team_role> model_team_role; ///< the principal's role in the scope's model's team
    bool model_exists = false;                ///< the scope's model exists (in its team)
};

using resource = std::variant<s3_target, bucket_resource, acl_change, key_area, api_target, team_resource,
                              hf_model, user_resource, upload_resource, installation, granted_scope>;

/// The decision. ok() or the refusal (access_denied, or not_found for a team the caller is not in).
result<void> authorize(const principal& who, permission what, const resource& on);

/// For an alias scope and an s3_target inside its model's area: the path relative to the model's prefix,
/// whose membership in the aliased version the caller resolves (s3_target::alias_file). nullopt otherwise.
std::optional<std::string_view> alias_file_path(const principal& who, permission what,
                                                std::string_view bucket, std::string_view path,
                                                const model_location* model);

} // namespace depot::auth
