#include "auth/authorize.hpp"

#include <algorithm>
#include <array>

namespace depot::auth {
namespace {

constexpr std::array<std::string_view, 4> role_names = {"reader", "writer", "maintainer", "admin"};

struct permission_traits
{
    permission p;
    std::string_view name;
    bool read;
    team_role role = team_role::reader;
};

constexpr std::size_t permission_count = static_cast<std::size_t>(permission::hf_read) + 1;

constexpr std::array<permission_traits, permission_count> traits = {{
    {permission::list_buckets, "list_buckets", true},
    {permission::create_bucket, "create_bucket", false},
    {permission::delete_bucket, "delete_bucket", false},
    {permission::read_bucket, "read_bucket", true},
    {permission::read_bucket_acl, "read_bucket_acl", true},
    {permission::configure_bucket, "configure_bucket", false},
    {permission::list_objects, "list_objects", true},
    {permission::list_object_versions, "list_object_versions", true},
    {permission::list_uploads, "list_uploads", true},
    {permission::delete_objects, "delete_objects", false},
    {permission::read_object, "read_object", true},
    {permission::read_object_metadata, "read_object_metadata", true},
    {permission::write_object, "write_object", false},
    {permission::write_object_metadata, "write_object_metadata", false},
    {permission::write_object_lock, "write_object_lock", false},
    {permission::read_acl, "read_acl", true},
    {permission::write_acl, "write_acl", false},
    {permission::cors_preflight, "cors_preflight", true},
    {permission::whoami, "whoami", true},
    {permission::session_start, "session_start", false},
    {permission::session_end, "session_end", false},
    {permission::account_read, "account_read", true},
    {permission::audit_read, "audit_read", true},
    {permission::account_write, "account_write", false},
    {permission::users_read, "users_read", true},
    {permission::users_write, "users_write", false},
    {permission::bucket_info_read, "bucket_info_read", true},
    {permission::bucket_info_write, "bucket_info_write", false},
    {permission::teams_list, "teams_list", true},
    {permission::team_create, "team_create", false},
    {permission::team_read, "team_read", true},
    {permission::team_contents_read, "team_contents_read", true},
    {permission::team_members_write, "team_members_write", false, team_role::admin},
    {permission::team_policy_write, "team_policy_write", false, team_role::admin},
    {permission::model_create, "model_create", false, team_role::writer},
    {permission::webhooks_read, "webhooks_read", true, team_role::admin},
    {permission::webhooks_write, "webhooks_write", false, team_role::admin},
    {permission::model_read, "model_read", true},
    {permission::model_history_read, "model_history_read", true},
    {permission::model_update, "model_update", false, team_role::writer},
    {permission::model_policy_write, "model_policy_write", false, team_role::admin},
    {permission::approval_policy_write, "approval_policy_write", false, team_role::admin},
    {permission::version_create, "version_create", false, team_role::writer},
    {permission::version_review, "version_review", false},
    {permission::version_retire, "version_retire", false, team_role::maintainer},
    {permission::alias_write, "alias_write", false, team_role::maintainer},
    {permission::hf_read, "hf_read", true},
}};

// Every permission has its row, in enum order (the table is indexed by the enum).
constexpr bool traits_complete()
{
    for (std::size_t i = 0; i < traits.size(); ++i)
        if (traits[i].name.empty() || static_cast<std::size_t>(traits[i].p) != i)
            return false;
    return true;
}
static_assert(traits_complete(), "auth::traits must list every permission in enum order");

const permission_traits& traits_of(permission p)
{
    return traits[static_cast<std::size_t>(p)];
}

error denied(std::string_view why)
{
    return make_error(errc::access_denied, "Access Denied: " + std::string(why));
}

bool is_object(permission p)
{
    return p == permission::read_object || p == permission::read_object_metadata ||
           p == permission::write_object || p == permission::write_object_metadata ||
           p == permission::write_object_lock || p == permission::read_acl || p == permission::write_acl;
}

bool is_listing(permission p)
{
    return p == permission::list_objects || p == permission::list_object_versions ||
           p == permission::list_uploads;
}

/// The scope, when it narrows anything; an error when it cannot be read.
result<const access_scope*> narrowing(const principal& who)
{
    if (who.scope_unreadable)
        return denied("the credential's scope is unreadable");
    if (!who.scope || who.scope->unrestricted())
        return static_cast<const access_scope*>(nullptr);
    return &*who.scope;
}

/// Whether an S3 operation at `t` stays inside the scope `s` (which confines to a bucket or a model).
result<void> scope_reaches_target(const access_scope& s, permission what, const s3_target& t)
{
    const bool object = is_object(what);
    const bool listing = is_listing(what);
    if (!s.model.empty() && t.models_view) {
        // The read-only view: team/model/<ref>/..., for an alias only team/model/<alias>/...
        std::string within = s.team + "/" + s.model + "/";
        if (!s.alias.empty())
            within += s.alias + "/";
        if ((!object && !listing) || t.path.starts_with(within))
            return ok();
        return denied("the credential is limited to " + within);
    }
    if (!s.model.empty() && !t.scope_model)
        return denied("the credential's model no longer exists");
    const auto area = area_of(s, t.scope_model);
    if (!area)
        return ok();
    if (t.bucket != area->bucket)
        return denied("the credential is limited to another bucket");
    if (!s.alias.empty()) {
        // Only the files of the version the alias points to now, and only as frozen: the live object at
        // the same path (overwritten since, or an older version of it) is not what the alias released.
        if (what != permission::read_object || t.version_id || !area_reaches(*area, t.bucket, t.path) ||
            !t.alias_file)
            return denied("the credential is limited to the files of alias " + s.alias);
        return ok();
    }
    // A bucket scope reaches all of its bucket. A model's reaches the model's files and listings only, also
    // when the model spans the whole bucket (an empty prefix): never the bucket's settings, ACL, policy or
    // bulk deletes, nor its snapshots, which a prefix scope cannot reach either.
    if (area->prefix.empty() && s.model.empty())
        return ok();
    if (!s.model.empty() && t.snapshot_key)
        return denied("the credential is limited to the files of model " + s.team + "/" + s.model);
    // An object permission without a key is the bucket's own (PutBucketAcl's write_acl).
    if (((object && !t.path.empty()) || listing) && area_reaches(*area, t.bucket, t.path))
        return ok();
    if (!object && !listing && what == permission::read_bucket)
        return ok();
    return denied("the credential is limited to keys under " + area->prefix);
}

result<void> decide(const principal& who, permission what, const s3_target& t)
{
    if (what == permission::cors_preflight)
        return make_error(errc::access_denied, "A CORS preflight is not an authorized request");
    auto s = narrowing(who);
    if (!s)
        return std::move(s).error();
    if (*s) {
        const auto& scope = **s;
        if (scope.read_only && !is_read(what))
            return denied("the credential is read-only");
        // ListBuckets lists only what the scope reaches; a read-only scope confines to no bucket.
        if (!t.bucket.empty() && !(scope.bucket.empty() && scope.model.empty())) {
            if ((what == permission::create_bucket || what == permission::delete_bucket) &&
                scope.bucket.empty())
                return denied("the credential cannot create or delete buckets");
            if (auto inside = scope_reaches_target(scope, what, t); !inside)
                return inside;
            if (t.copy_source)
                if (auto inside = scope_reaches_target(scope, permission::read_object, *t.copy_source);
                    !inside)
                    return inside;
        }
        // Bypassing GOVERNANCE retention removes what protects every version of the bucket: only a
        // credential that reaches all of it (the bucket check above has confined it to this bucket).
        if (t.bypass_governance &&
            (scope.read_only || !scope.prefix.empty() || !scope.model.empty() || !scope.alias.empty()))
            return denied("bypassing GOVERNANCE retention needs a credential that reaches the whole bucket");
    }
    // The models view and a bucket's snapshots serve reads only (CreateBucket of the view's name is
    // answered by the operation itself, as for any existing bucket).
    constexpr std::array<permission, 3> view_reads = {permission::read_bucket, permission::list_objects,
                                                      permission::read_object};
    if (t.models_view && what != permission::create_bucket &&
        std::find(view_reads.begin(), view_reads.end(), what) == view_reads.end())
        return make_error(errc::access_denied, "The model view is read-only: " + std::string(t.operation) +
                                                   " is not allowed on bucket " + std::string(t.bucket));
    if (t.snapshot_key && is_object(what) && what != permission::read_object)
        return make_error(errc::access_denied, "Snapshots are read-only: " + std::string(t.operation) +
                                                   " is not allowed under .snapshots/");
    return ok();
}

/// The ACL rights of `g` that count for `who` under the bucket's rules.
std::uint8_t effective(const principal& who, const bucket_resource& b, const acl_grants& g)
{
    if (b.has_models || b.acls_disabled)
        return 0;
    std::uint8_t bits = who.user_id.empty() ? 0 : g.user;
    if (!b.ignore_public) {
        bits |= g.all_users;
        if (!who.user_id.empty())
            bits |= g.authenticated_users;
    }
    return bits;
}

bool owns(const principal& who, const bucket_resource& b)
{
    return (!who.user_id.empty() && b.owner_id == who.user_id) || who.installation_admin;
}

/// x-amz-bypass-governance-retention: the owner, an installation admin, or a policy statement naming
/// s3:BypassGovernanceRetention exactly (a sensitive action); a policy Deny of it binds everyone; never an
/// ACL grant, never an anonymous caller.
result<void> decide_bypass(const principal& who, const bucket_resource& b)
{
    constexpr std::string_view action = "s3:BypassGovernanceRetention";
    bool policy_allows = false;
    if (b.policy) {
        policy_request r = b.request;
        r.action = action;
        r.object_action = true;
        r.user_id = who.user_id;
        r.exact_allow_only = true;
        r.ignore_public = b.ignore_public_policy;
        if (!b.object) {
            // DeleteObjects as a whole: each key is then decided on its own.
            policy_allows = !b.has_models && may_allow(*b.policy, r);
        } else {
            const auto effect = evaluate(*b.policy, r);
            if (effect == policy_effect::deny)
                return make_error(errc::access_denied,
                                  "Access Denied: the bucket policy denies s3:BypassGovernanceRetention");
            policy_allows = effect == policy_effect::allow && !b.has_models;
        }
    }
    if (owns(who, b) || (!who.user_id.empty() && policy_allows))
        return ok();
    return make_error(errc::access_denied,
                      "Access Denied: x-amz-bypass-governance-retention needs the bucket's owner, an "
                      "installation admin or a bucket policy allowing s3:BypassGovernanceRetention");
}

result<void> decide_access(const principal& who, permission what, const bucket_resource& b)
{
    const bool owner = owns(who, b);
    bool policy_allows = false;
    if (b.policy && !b.request.action.empty()) {
        policy_request r = b.request;
        r.user_id = who.user_id;
        r.exact_allow_only = is_sensitive_action(r.action);
        r.ignore_public = b.ignore_public_policy;
        if (what == permission::delete_objects && !b.object) {
            // DeleteObjects as a whole: each key is then decided on its own (its Deny, its Allow).
            policy_allows = !b.has_models && may_allow(*b.policy, r);
        } else {
            const auto effect = evaluate(*b.policy, r);
            if (effect == policy_effect::deny && !(owner && is_policy_management(r.action)))
                return make_error(errc::access_denied,
                                  "Access Denied: the bucket policy denies " + std::string(r.action));
            policy_allows =
                effect == policy_effect::allow && !b.has_models && !is_policy_management(r.action);
        }
    }
    if (owner)
        return ok();
    if (b.owner_only)
        return make_error(errc::access_denied, "Access Denied: the snapshots of bucket " +
                                                   std::string(b.name) + " are its owner's");
    const auto refused = [] { return make_error(errc::access_denied, "Access Denied"); };
    if (who.user_id.empty() && !is_read(what))
        return refused(); // anonymous callers only read, whatever a grant says
    const std::uint8_t on_bucket = effective(who, b, b.bucket_grants);
    const std::uint8_t on_object = b.object_grants ? effective(who, b, *b.object_grants) : 0;
    std::uint8_t needed = 0;
    std::uint8_t held = on_bucket;
    switch (what) {
    case permission::read_bucket:
    case permission::list_objects:
    case permission::list_object_versions:
    case permission::list_uploads:
        needed = acl_right::read;
        break;
    case permission::write_object:
    case permission::delete_objects:
        if (b.deletes_version || b.others_upload)
            return policy_allows ? ok() : refused();
        needed = acl_right::write;
        break;
    case permission::read_object:
        needed = acl_right::read;
        held = b.object_grants ? on_object : b.object_missing ? on_bucket : 0;
        break;
    case permission::read_acl:
    case permission::write_acl:
        needed = what == permission::read_acl ? acl_right::read_acp : acl_right::write_acp;
        if (b.object)
            held = on_object;
        break;
    default:
        return policy_allows ? ok() : refused();
    }
    if ((held & needed) == needed || policy_allows)
        return ok();
    return refused();
}

result<void> decide(const principal& who, permission what, const bucket_resource& b)
{
    if (auto allowed = decide_access(who, what, b); !allowed)
        return allowed;
    if (b.bypass_governance)
        return decide_bypass(who, b);
    return ok();
}

result<void> decide(const principal&, permission, const acl_change& c)
{
    if (c.public_grants && c.block_public)
        return make_error(errc::access_denied,
                          "Access Denied: public access is blocked for bucket " + std::string(c.bucket) +
                              " (its PublicAccessBlock, or the installation's --allow-public-access)");
    if (c.has_models && (c.public_grants || c.other_grantees))
        return make_error(errc::access_denied,
                          "Access Denied: models live in bucket " + std::string(c.bucket) +
                              ": team roles govern who reaches it, ACL grants to others are refused");
    return ok();
}

result<void> decide(const principal& who, permission, const key_area& a)
{
    auto s = narrowing(who);
    if (!s)
        return std::move(s).error();
    if (!*s)
        return ok();
    const auto& scope = **s;
    if (!scope.alias.empty())
        return denied("the credential reads only the files of alias " + scope.alias);
    if (!scope.model.empty() && a.snapshot)
        return denied("the credential is limited to the files of model " + scope.team + "/" + scope.model +
                      ", not the bucket's snapshots");
    auto area = area_of(scope, a.scope_model);
    if (!area || area_reaches(*area, a.bucket, a.prefix))
        return ok();
    return denied("the credential is limited to keys under " + area->bucket + "/" + area->prefix);
}

result<void> decide(const principal& who, permission what, const api_target& t)
{
    if (what == permission::whoami || what == permission::session_end)
        return ok();
    if (what == permission::session_start)
        return make_error(errc::access_denied, "Signing in is not an authorized request");
    auto s = narrowing(who);
    if (!s)
        return std::move(s).error();
    if (!*s)
        return ok();
    const auto& scope = **s;
    const bool read = is_read(what);
    if (scope.read_only && !read)
        return denied("the credential is read-only");
    if (!scope.bucket.empty()) {
        if (t.bucket != scope.bucket)
            return denied("the credential is limited to bucket " + scope.bucket);
        // A bucket's settings, usage and snapshots are the whole bucket's: a prefix reaches none of them.
        if (!scope.prefix.empty())
            return denied("the credential is limited to keys under " + scope.prefix);
        return ok();
    }
    if (!scope.model.empty()) {
        const std::string model = scope.team + "/" + scope.model;
        if (t.team != scope.team)
            return denied("the credential is limited to model " + model);
        if (t.model.empty()) {
            if (what == permission::team_read && scope.alias.empty())
                return ok();
            return denied("the credential is limited to a model");
        }
        if (t.model != scope.model)
            return denied("the credential is limited to model " + model);
        if (!scope.alias.empty()) {
            if (what != permission::model_read)
                return denied("the credential is limited to alias " + scope.alias);
            for (auto ref : {t.alias, t.version})
                if (!ref.empty() && ref != scope.alias)
                    return denied("the credential is limited to alias " + scope.alias);
        }
        return ok();
    }
    return ok(); // read-only without a bucket or model: every read
}

result<void> decide(const principal& who, permission what, const team_resource& t)
{
    std::optional<team_role> role = t.role;
    if (!role && who.installation_admin)
        role = team_role::admin; // an installation admin counts as an admin of every team
    if (!role)
        return make_error(errc::not_found, "No such team"); // nothing about other teams leaks
    const team_role needed = std::max(required_role(what), t.policy_role.value_or(team_role::reader));
    if (*role >= needed)
        return ok();
    const std::string yours(to_string(*role));
    const std::string wanted(to_string(needed));
    if (what == permission::webhooks_read || what == permission::webhooks_write)
        return make_error(errc::access_denied,
                          "Managing a team's webhooks needs the team role 'admin'; yours is '" + yours + "'");
    if (what == permission::approval_policy_write)
        return make_error(errc::access_denied,
                          "Changing a model's approval policy needs the team role 'admin'");
    if (what == permission::version_review && t.policy_role)
        return make_error(errc::access_denied,
                          "Approving or rejecting versions of this model needs the team role '" + wanted +
                              "' or higher");
    return make_error(errc::access_denied,
                      "This needs the team role '" + wanted + "' or higher; yours is '" + yours + "'");
}

result<void> decide(const principal& who, permission, const hf_model& m)
{
    auto s = narrowing(who);
    if (!s)
        return std::move(s).error();
    if (!*s)
        return ok();
    const auto& scope = **s;
    if (!scope.bucket.empty())
        return denied("the credential is limited to bucket " + scope.bucket);
    if (!scope.model.empty() && (scope.team != m.team || scope.model != m.model))
        return denied("the credential is limited to model " + scope.team + "/" + scope.model);
    if (!scope.alias.empty() && m.alias_version == false)
        return denied("the credential is limited to the version alias " + scope.alias + " points to");
    return ok();
}

result<void> decide(const principal& who, permission what, const user_resource& u)
{
    if (u.owner_id == who.user_id || who.installation_admin)
        return ok();
    if (what == permission::account_read)
        return make_error(errc::access_denied, "Only an installation admin lists another user's credentials");
    return make_error(errc::access_denied, "Only an installation admin creates credentials for another user");
}

result<void> decide(const principal& who, permission, const upload_resource& u)
{
    if (u.owner_id == who.user_id)
        return ok();
    return make_error(errc::access_denied, "Only the user who started an upload publishes it");
}

result<void> decide(const principal& who, permission what, const installation& i)
{
    if (who.installation_admin)
        return ok();
    switch (what) {
    case permission::audit_read:
        if (i.team_admin_somewhere)
            return ok(); // their teams' rows only (registry::list_audit filters)
        return make_error(errc::access_denied,
                          "Reading the audit log needs installation admin or a team's admin role");
    case permission::users_read:
        return make_error(errc::access_denied, "Listing users needs an installation admin");
    case permission::users_write:
        return make_error(errc::access_denied, "Creating users needs an installation admin");
    case permission::team_create:
        return make_error(errc::access_denied, "Only an installation admin can create teams");
    default:
        return make_error(errc::access_denied, "This needs an installation admin");
    }
}

result<void> decide(const principal& who, permission, const granted_scope& g)
{
    if (!g.scope)
        return ok();
    if (!g.scope->bucket.empty() && g.bucket_owner_id != who.user_id) // no admin override: their own only
        return make_error(errc::invalid_argument, "scope.bucket: no such bucket of the user", "scope");
    if (!g.scope->model.empty() && (!g.model_exists || (!g.model_team_role && !who.installation_admin)))
        return make_error(errc::invalid_argument, "scope.model: no such model in the user's teams", "scope");
    return ok();
}

} // namespace

bool is_policy_management(std::string_view action) noexcept
{
    return action == "s3:GetBucketPolicy" || action == "s3:PutBucketPolicy" ||
           action == "s3:DeleteBucketPolicy";
}

bool is_sensitive_action(std::string_view action) noexcept
{
    return action == "s3:DeleteBucket" || action == "s3:PutBucketPublicAccessBlock" ||
           action == "s3:PutBucketOwnershipControls" || action == "s3:PutBucketObjectLockConfiguration" ||
           action == "s3:BypassGovernanceRetention";
}

std::optional<team_role> team_role_of(std::string_view name) noexcept
{
    for (std::size_t i = 0; i < role_names.size(); ++i)
        if (role_names[i] == name)
            return static_cast<team_role>(i + 1);
    return std::nullopt;
}

std::string_view to_string(team_role role) noexcept
{
    return role_names[static_cast<std::size_t>(role) - 1];
}

principal make_principal(std::string user_id, bool installation_admin, std::string_view scope_json)
{
    principal p{.user_id = std::move(user_id), .installation_admin = installation_admin};
    if (scope_json.empty())
        return p;
    auto s = parse_scope(scope_json);
    if (!s)
        p.scope_unreadable = true;
    else if (!s->unrestricted())
        p.scope = std::move(*s);
    return p;
}

std::string_view to_string(permission p) noexcept
{
    return traits_of(p).name;
}

bool is_read(permission p) noexcept
{
    return traits_of(p).read;
}

team_role required_role(permission p) noexcept
{
    return traits_of(p).role;
}

std::span<const permission> all_permissions() noexcept
{
    static const auto all = [] {
        std::array<permission, permission_count> out{};
        for (std::size_t i = 0; i < permission_count; ++i)
            out[i] = traits[i].p;
        return out;
    }();
    return all;
}

result<void> authorize(const principal& who, permission what, const resource& on)
{
    return std::visit([&](const auto& r) { return decide(who, what, r); }, on);
}

std::optional<std::string_view> alias_file_path(const principal& who, permission what,
                                                std::string_view bucket, std::string_view path,
                                                const model_location* model)
{
    if (who.scope_unreadable || !who.scope || who.scope->alias.empty() || !model ||
        what != permission::read_object || bucket != model->bucket || !path.starts_with(model->prefix))
        return std::nullopt;
    return path.substr(model->prefix.size());
}

} // namespace depot::auth
