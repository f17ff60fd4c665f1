#pragma once
/// \file
/// The server's side of authorization: it resolves, once per request, what a decision needs (the principal
/// after authentication, the caller's role in a team, a bucket's owner, where a scoped model lives, whether
/// a path is a file of an aliased version) and asks auth::authorize (auth/authorize.hpp), which alone
/// decides. The dispatchers (S3, REST, Hugging Face) authorize each request's route with the route's
/// permission before the handler runs (and so before any body byte is read); the S3 and REST steps also load
/// and decide the route's bucket (load_authorized_bucket, api::caller_bucket), which its handlers only read.
/// Other resources are authorized where they are looked up (a REST team row, a bucket a body names, a copy
/// source, a restore target). Scopes
/// are read from the database with the credential on every request, so narrowing or revoking a credential
/// holds from the next request on.

#include "auth/authorize.hpp"
#include "registry/service/model_registry.hpp"
#include "registry/vocabulary.hpp"
#include "server/api/http_api.hpp"
#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::registry {
struct bucket;
}

namespace depot::server {

namespace asio = boost::asio;

/// Sets ctx.principal from ctx.who once the request is authenticated. S3 takes the installation-admin flag
/// the credential lookup returned; REST and the Hub API read the user's row (whatever the credential).
void set_principal(request_context& ctx);
asio::awaitable<void> resolve_principal(request_context& ctx);

/// Whether the request asks to bypass GOVERNANCE retention: x-amz-bypass-governance-retention: true on an
/// operation that honours it (DeleteObject, DeleteObjects, PutObjectRetention; AWS ignores it elsewhere). A
/// fact of the request: authorize_s3_request and authorize_bucket_access hand it to auth::authorize, which
/// decides who may (the owner, an installation admin, a policy naming s3:BypassGovernanceRetention).
bool asks_bypass_governance(const request_context& ctx);

/// An S3 request's route, before the handler: the scope and the read-only views. `operation`: the AWS
/// action name (for messages). For an alias-scoped credential reading a path of its model's bucket, sets
/// ctx.frozen_view_key: the read serves that frozen file of the aliased version, never the live object. A
/// copy's source (x-amz-copy-source) is authorized as a read_object of its own.
asio::awaitable<result<void>> authorize_s3_request(request_context& ctx, auth::permission what,
                                                   std::string_view operation);

/// A bucket row the request reaches: owner or installation admin (no ACL grants: the REST API's buckets).
result<void> authorize_bucket(const request_context& ctx, auth::permission what, const registry::bucket& b);

/// Whether the bucket's policy explicitly Denies the caller the object action `action` on `key` (Allows and
/// grants are not asked); for a listing action (s3:ListBucket...), `key` is the listing's s3:prefix. A
/// snapshot view's key or prefix is asked about as the key below the snapshot (registry::live_key_of);
/// `version_id` as for authorize_bucket_access. A model version reads its bucket with the authority the
/// model's binding gives the team, and so never past such a Deny: every file it would freeze is asked about.
bool policy_denies(const request_context& ctx, const registry::bucket& b, std::string_view action,
                   std::string_view key, std::optional<std::string_view> version_id = std::nullopt);

/// A bucket row an S3 request reaches: owner or installation admin, or what the bucket's ACL and, for an
/// object permission, the addressed object version's ACL grant the caller (auth::bucket_resource), under
/// the bucket's ownership controls, its PublicAccessBlock and the installation's --allow-public-access.
/// `key`: the object the permission is about ("" for bucket permissions).
/// The bucket's policy decides too (auth/bucket_policy.hpp), for the request's AWS action (ctx.s3_action).
/// A snapshot view's key or listing (`.snapshots/<name>/...`) is decided as what it serves: the policy is
/// asked about the key (or prefix) inside the snapshot, and only the owner and installation admins reach it.
asio::awaitable<result<void>> authorize_bucket_access(request_context& ctx, auth::permission what,
                                                      const registry::bucket& b, std::string_view key);
/// The same for `action` (e.g. DeleteObjects' s3:DeleteObject of each key; empty: the policy is not asked).
/// `object_acls` false: the object's ACL is not read (a copy's source, whose version the request's own
/// versionId does not name), so only the owner, the bucket's grants and its policy decide. `version_id`: the
/// version `action` is about when the request's ?versionId does not name it (a copy's source, one key of
/// DeleteObjects): the policy's s3:VersionId.
asio::awaitable<result<void>>
authorize_bucket_access(request_context& ctx, auth::permission what, const registry::bucket& b,
                        std::string_view key, std::string_view action, bool object_acls = true,
                        std::optional<std::string_view> version_id = std::nullopt);

/// Loads bucket `name` and decides `what` on it with authorize_bucket_access (`key`, `action`,
/// `object_acls`, `version_id` as there). The models view is a bucket every caller has (what it shows depends
/// on the caller's teams): no row is read for it. Errors: no_such_bucket, access_denied.
asio::awaitable<result<registry::bucket>>
load_authorized_bucket(request_context& ctx, std::string_view name, auth::permission what,
                       std::string_view key, std::string_view action, bool object_acls,
                       std::optional<std::string_view> version_id = std::nullopt);

/// A REST request about bucket `b` (its objects, snapshots, settings or usage) by its owner or an
/// installation admin — the REST API acts on no other user's bucket (caller_bucket answers 404 before): the
/// same facts and auth::authorize as authorize_bucket_access, so the bucket policy's explicit Deny of
/// `action` binds these routes exactly as it binds S3. The condition values are the connection's and what
/// the route states: a REST request's query and headers are not S3's (its writes store no encryption and no
/// ACL whatever headers say). `key`: the object the action is about (an object action's resource is
/// bucket/key), "" for bucket actions; for a listing action (s3:ListBucket), the prefix it lists. Pure once
/// the row is loaded: the owner's requests read no ACL. access_denied names the policy.
result<void> authorize_bucket_rest(const request_context& ctx, auth::permission what,
                                   const registry::bucket& b, std::string_view action,
                                   std::string_view key = {});

/// Whether public statements of `b`'s policy are void: its RestrictPublicBuckets, or the installation does
/// not allow public access.
bool restricts_public_policy(const request_context& ctx, const registry::bucket& b);
/// Whether a public policy may not be set on `b`: its BlockPublicPolicy, or the installation's option.
bool blocks_public_policy(const request_context& ctx, const registry::bucket& b);

/// Whether public grants of `b` are void: its IgnorePublicAcls, or the installation does not allow them.
bool ignores_public_acls(const request_context& ctx, const registry::bucket& b);
/// Whether public grants may not be set on `b`: its BlockPublicAcls, or the installation's option.
bool blocks_public_acls(const request_context& ctx, const registry::bucket& b);

/// The area (bucket and key prefix) the caller's credential confines data access to; nullopt when it
/// confines to no bucket. For what a handler reaches beyond its path parameters: ListBuckets, the sources
/// of objects created from a digest.
asio::awaitable<std::optional<registry::scope_area>> scope_area_of(request_context& ctx);

/// Keys under `key_prefix` of `bucket` the request reaches besides its path (a restore's source prefix and
/// target, a digest's target key); `in_snapshot`: as a snapshot holds them (auth::key_area::snapshot).
asio::awaitable<result<void>> authorize_area(request_context& ctx, auth::permission what,
                                             std::string_view bucket, std::string_view key_prefix,
                                             bool in_snapshot = false);

/// A REST request's route, before the handler: the scope against the path parameters.
result<void> authorize_api_request(const request_context& ctx, auth::permission what,
                                   const api::path_params& params);

/// A team and the caller's role in it, once authorized.
struct team_access
{
    registry::team team;
    auth::team_role role = auth::team_role::reader;
};

/// The team `name` if the caller may do `what` in it: not_found when it does not exist or the caller is
/// not a member (nothing about other teams leaks), access_denied when the role is too low.
asio::awaitable<result<team_access>> authorize_team(request_context& ctx, auth::permission what,
                                                    std::string_view name);

/// Something belonging to `owner_id` (credentials): the owner or an installation admin. A refusal is noted
/// for the request (note_refusal): it is audited also where it is answered as an absence.
result<void> authorize_user(const request_context& ctx, auth::permission what, std::string_view owner_id);

/// Installation-wide operations (users, teams, the audit log).
asio::awaitable<result<void>> authorize_installation(request_context& ctx, auth::permission what);

/// A route of one of the tables, for the test that enumerates them: "METHOD path", whether the method
/// only reads (GET, HEAD), and the route's permission.
struct route_permission_entry
{
    std::string route;
    bool read_method = false;
    auth::permission permission;
    /// S3 routes: the AWS action bucket policies name it by ("" for none: only the CORS preflights).
    std::string action = {};
};
std::vector<route_permission_entry> s3_route_permissions(); ///< server/dispatch.cpp
namespace api {
std::vector<route_permission_entry> route_permissions(); ///< server/api/api.cpp
}
namespace hf {
std::vector<route_permission_entry> route_permissions(); ///< server/hf/hf.cpp
}

} // namespace depot::server
