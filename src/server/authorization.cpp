#include "server/authorization.hpp"

#include "auth/scope_alias.hpp"
#include "common/strings.hpp"
#include "registry/service/snapshot_service.hpp"
#include "s3/acl.hpp"
#include "server/audit_requests.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/s3/post_object.hpp"
#include "server/s3/versioning.hpp"
#include "server/services.hpp"

#include <algorithm>
#include <chrono>

namespace depot::server {
namespace {

/// Where the caller's model scope lives; nullopt when the scope names no model (or cannot be read).
asio::awaitable<std::optional<registry::model_location>> scope_model(request_context& ctx)
{
    const auto& p = ctx.principal;
    if (!p.scope || p.scope->model.empty())
        co_return std::nullopt;
    co_return co_await ctx.svc->credentials.locate_model(p.scope->team, p.scope->model);
}

/// An S3 target with the facts its decision needs (owned here: the target points into it).
struct resolved_target
{
    auth::s3_target target;
    std::optional<registry::model_location> where;
    std::optional<std::string_view> alias_relative;
};

/// `path`: the key (a listing's prefix) the target is about, the request's own or a copy's source;
/// `names_version`: whether it names a version (the request's versionId, the source's ?versionId=).
asio::awaitable<void> resolve_target(request_context& ctx, resolved_target& r, auth::permission what,
                                     std::string_view operation, std::string_view bucket,
                                     std::string_view path, bool names_version)
{
    auto& t = r.target;
    t = auth::s3_target{.operation = operation,
                        .bucket = bucket,
                        .path = path,
                        .models_view = bucket == ctx.svc->opts.models_bucket,
                        .snapshot_key = registry::is_snapshot_key(path),
                        .version_id = names_version};
    if (!t.bucket.empty() && !t.models_view)
        r.where = co_await scope_model(ctx);
    t.scope_model = r.where ? &*r.where : nullptr;
    r.alias_relative = auth::alias_file_path(ctx.principal, what, bucket, path, t.scope_model);
    if (r.alias_relative && !t.version_id)
        t.alias_file = co_await ctx.svc->credentials.alias_has_file(
            r.where->model_id, auth::scope_alias_id(ctx.who.scope), *r.alias_relative);
}

} // namespace

bool asks_bypass_governance(const request_context& ctx)
{
    if (ctx.s3_action != "s3:DeleteObject" && ctx.s3_action != "s3:DeleteObjectVersion" &&
        ctx.s3_action != "s3:PutObjectRetention")
        return false;
    auto header = ctx.get("x-amz-bypass-governance-retention");
    return header && iequals_ascii(trim_ows(*header), "true");
}

void set_principal(request_context& ctx)
{
    ctx.principal = auth::make_principal(ctx.who.user_id, ctx.who.is_admin, ctx.who.scope);
}

asio::awaitable<void> resolve_principal(request_context& ctx)
{
    auto u = co_await ctx.svc->credentials.get_user(ctx.who.user_id);
    ctx.principal = auth::make_principal(ctx.who.user_id, u && u->is_admin, ctx.who.scope);
}

asio::awaitable<result<void>> authorize_s3_request(request_context& ctx, auth::permission what,
                                                   std::string_view operation)
{
    using auth::permission;
    const bool listing = what == permission::list_objects || what == permission::list_object_versions ||
                         what == permission::list_uploads;
    const std::string_view path = !ctx.key.empty() ? std::string_view(ctx.key)
                                  : listing        ? ctx.param("prefix").value_or("")
                                                   : std::string_view();
    resolved_target own;
    co_await resolve_target(ctx, own, what, operation, ctx.bucket, path, ctx.has_param("versionId"));
    // A copy reads its source: it is a resource of the request too (only a scope confined to a bucket or a
    // model can refuse it here; the operation authorizes the source bucket once it has looked it up).
    std::optional<s3op::copy_source> parsed;
    resolved_target source;
    const auto& scope = ctx.principal.scope;
    if (auto header = ctx.get("x-amz-copy-source");
        header && !ctx.key.empty() && scope && (!scope->bucket.empty() || !scope->model.empty())) {
        auto p = s3op::parse_copy_source(*header);
        if (!p) {
            // A refusal of the target comes first, as it would with a readable source.
            if (auto allowed = auth::authorize(ctx.principal, what, own.target); !allowed)
                co_return allowed;
            co_return std::move(p).error();
        }
        parsed = std::move(*p);
        // A source under .snapshots/ is a snapshot read, which a model's scope never reaches.
        co_await resolve_target(ctx, source, permission::read_object, "GetObject", parsed->bucket,
                                parsed->key, parsed->version_id.has_value());
        own.target.copy_source = &source.target;
    }
    own.target.bypass_governance = asks_bypass_governance(ctx);
    auto allowed = auth::authorize(ctx.principal, what, own.target);
    if (allowed && own.target.alias_file) {
        const auto& s = *ctx.principal.scope;
        ctx.frozen_view_key = s.team + "/" + s.model + "/" + s.alias + "/" + std::string(*own.alias_relative);
    }
    co_return allowed;
}

result<void> authorize_bucket(const request_context& ctx, auth::permission what, const registry::bucket& b)
{
    auto allowed =
        auth::authorize(ctx.principal, what, auth::bucket_resource{.name = b.name, .owner_id = b.owner_id});
    if (!allowed)
        note_refusal(ctx, {.bucket = b.name}); // answered as an absent bucket: still a refusal, audited
    return allowed;
}

bool ignores_public_acls(const request_context& ctx, const registry::bucket& b)
{
    return !ctx.svc->opts.allow_public_access ||
           (b.public_access_block.size() == 4 && b.public_access_block[1] == '1');
}

bool blocks_public_acls(const request_context& ctx, const registry::bucket& b)
{
    return !ctx.svc->opts.allow_public_access ||
           (b.public_access_block.size() == 4 && b.public_access_block[0] == '1');
}

namespace {

auth::acl_grants grants_of(std::string_view stored, std::string_view user_id)
{
    const auto r = s3::rights_of(s3::acl_from_stored(stored), user_id);
    return {.user = r.user, .all_users = r.all_users, .authenticated_users = r.authenticated_users};
}

} // namespace

bool restricts_public_policy(const request_context& ctx, const registry::bucket& b)
{
    return !ctx.svc->opts.allow_public_access ||
           (b.public_access_block.size() == 4 && b.public_access_block[3] == '1');
}

bool blocks_public_policy(const request_context& ctx, const registry::bucket& b)
{
    return !ctx.svc->opts.allow_public_access ||
           (b.public_access_block.size() == 4 && b.public_access_block[2] == '1');
}

namespace {

/// Whether the request is one of S3's (its route has an AWS action): only then are its query and headers
/// S3's condition values.
bool is_s3_request(const request_context& ctx)
{
    return !ctx.s3_action.empty();
}

/// The actions whose policy request carries s3:prefix and whose resource is the bucket.
bool is_listing_action(std::string_view action)
{
    return action == "s3:ListBucket" || action == "s3:ListBucketVersions" ||
           action == "s3:ListBucketMultipartUploads";
}

/// The condition values of the request a bucket policy may test (auth/bucket_policy.hpp), keys lower-cased.
/// `action`: the action asked about; `listing_prefix`: the s3:prefix of a listing (what a view's listing
/// serves; the request's prefix otherwise); `version_id`: the version the action is about when the request's
/// ?versionId does not name it (a copy's source, a key of DeleteObjects).
std::vector<std::pair<std::string_view, std::string>>
policy_context(const request_context& ctx, std::string_view action, std::string_view listing_prefix,
               std::optional<std::string_view> version_id = std::nullopt)
{
    std::vector<std::pair<std::string_view, std::string>> out;
    out.emplace_back("aws:sourceip", ctx.remote);
    out.emplace_back("aws:securetransport", ctx.secure ? "true" : "false");
    if (!ctx.principal.user_id.empty()) {
        out.emplace_back("aws:userid", ctx.principal.user_id);
        out.emplace_back("aws:username", ctx.principal.user_id);
    }
    const auto now = std::chrono::system_clock::now();
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    out.emplace_back("aws:epochtime", std::to_string(secs));
    out.emplace_back("aws:currenttime", std::to_string(secs));
    // S3 sets s3:prefix on every listing ("" without a prefix parameter).
    if (is_listing_action(action))
        out.emplace_back("s3:prefix", std::string(listing_prefix));
    // A REST route's condition values are what the route itself states (its listing's prefix, the version
    // it names): its query and headers are not S3's, and what it stores is not what they say (a REST write
    // stores no encryption and no canned ACL, whatever headers came with it).
    if (!is_s3_request(ctx)) {
        if (version_id)
            out.emplace_back("s3:versionid", std::string(*version_id));
        return out;
    }
    if (is_listing_action(action)) {
        if (auto d = ctx.param("delimiter"))
            out.emplace_back("s3:delimiter", std::string(*d));
        if (auto m = ctx.param("max-keys"))
            out.emplace_back("s3:max-keys", std::string(*m));
    }
    // What the write is made of: a POST upload's signed form fields (its HTTP headers are neither signed nor
    // used: the object would be stored as the form says while the policy read something else), the headers
    // of every other request.
    const auto value = [&ctx](std::string_view header, std::string_view field) {
        return ctx.post_form ? s3op::post_form_field(*ctx.post_form, field) : ctx.get(header);
    };
    for (std::string_view h :
         {"x-amz-server-side-encryption", "x-amz-server-side-encryption-customer-algorithm", "x-amz-acl"})
        if (auto v = value(h, h == "x-amz-acl" ? "acl" : h))
            out.emplace_back(h == "x-amz-acl" ? "s3:x-amz-acl"
                             : h == "x-amz-server-side-encryption"
                                 ? "s3:x-amz-server-side-encryption"
                                 : "s3:x-amz-server-side-encryption-customer-algorithm",
                             std::string(*v));
    if (!version_id)
        version_id = ctx.param("versionId");
    if (version_id)
        out.emplace_back("s3:versionid", std::string(*version_id));
    return out;
}

/// What a request of a bucket's snapshot view serves: `.snapshots/<name>/<key>` reads <key> as of the
/// snapshot, a listing with prefix `.snapshots/<name>/<p>` lists keys under <p>. So the policy is asked
/// about <key> (or <p>), and only the owner reaches it (README: a bucket's snapshots are its owner's).
struct view_target
{
    bool snapshot = false;
    std::string_view key;    ///< the key the request is about, as the view resolves it
    std::string_view prefix; ///< a listing's prefix, as the view resolves it
};

view_target view_of(const request_context& ctx, auth::permission what, std::string_view key)
{
    using auth::permission;
    // A REST route's listing prefix is the one it states (authorize_bucket_rest), never its query's.
    const std::string_view prefix = is_s3_request(ctx) ? ctx.param("prefix").value_or("") : "";
    view_target v{.key = key, .prefix = prefix};
    if (!key.empty()) {
        if (registry::is_snapshot_key(key)) {
            v.snapshot = true;
            v.key = registry::key_below_snapshot_root(key);
        }
        return v;
    }
    const bool listing = what == permission::list_objects || what == permission::list_object_versions ||
                         what == permission::list_uploads;
    if (listing && prefix.starts_with(registry::snapshot_key_prefix)) {
        v.snapshot = true;
        v.prefix = registry::key_below_snapshot_root(prefix);
    }
    return v;
}

} // namespace

asio::awaitable<result<void>> authorize_bucket_access(request_context& ctx, auth::permission what,
                                                      const registry::bucket& b, std::string_view key)
{
    co_return co_await authorize_bucket_access(ctx, what, b, key, ctx.s3_action);
}

namespace {

/// The facts of `b` that S3 and REST decisions share (everything but the ACL grants, which only S3 reads):
/// ownership controls, the views, and the policy asked for `action` about `key`. `context` holds the
/// condition values the resource points into. `rest_prefix`: a REST route's listing prefix, as it states it.
auth::bucket_resource bucket_facts(const request_context& ctx, auth::permission what,
                                   const registry::bucket& b, std::string_view key, std::string_view action,
                                   std::optional<std::string_view> version_id,
                                   std::vector<std::pair<std::string_view, std::string>>& context,
                                   std::string_view rest_prefix = {})
{
    auth::bucket_resource r{.name = b.name,
                            .owner_id = b.owner_id,
                            .has_models = b.has_models,
                            .acls_disabled = b.object_ownership == "BucketOwnerEnforced",
                            .ignore_public = ignores_public_acls(ctx, b),
                            .object = !key.empty(),
                            .bypass_governance = !auth::is_read(what) && asks_bypass_governance(ctx),
                            .deletes_version = action == "s3:DeleteObjectVersion"};
    // A view is decided by what it serves: a snapshot's key is the policy's resource, and only the owner
    // reads it (no grant and no Allow reaches a snapshot, and the literal view key has no ACL of its own).
    auto view = view_of(ctx, what, key);
    if (!is_s3_request(ctx))
        view.prefix = rest_prefix;
    r.owner_only = view.snapshot;
    if (b.parsed_policy && !action.empty()) {
        context = policy_context(ctx, action, view.prefix, version_id);
        const auto actions = auth::known_s3_actions();
        const bool object_action =
            std::any_of(actions.begin(), actions.end(),
                        [&](const auth::known_action& a) { return a.object && a.name == action; });
        r.policy = b.parsed_policy.get();
        r.request = auth::policy_request{.action = action,
                                         .bucket = b.name,
                                         .key = view.key,
                                         .object_action = object_action,
                                         .context = context};
        r.ignore_public_policy = restricts_public_policy(ctx, b);
    }
    return r;
}

} // namespace

bool policy_denies(const request_context& ctx, const registry::bucket& b, std::string_view action,
                   std::string_view key, std::optional<std::string_view> version_id)
{
    if (!b.parsed_policy)
        return false;
    // A listing's key is its s3:prefix; its resource is the bucket. A snapshot view's key (or prefix) is
    // asked about as what it serves, the key below the snapshot, as bucket_facts asks it.
    const bool listing = is_listing_action(action);
    const std::string_view served = registry::live_key_of(key);
    const auto context = policy_context(ctx, action, listing ? served : std::string_view(), version_id);
    const auth::policy_request r{.action = action,
                                 .bucket = b.name,
                                 .key = listing ? std::string_view() : served,
                                 .object_action = !listing,
                                 .user_id = ctx.principal.user_id,
                                 .context = context};
    return auth::evaluate(*b.parsed_policy, r) == auth::policy_effect::deny;
}

result<void> authorize_bucket_rest(const request_context& ctx, auth::permission what,
                                   const registry::bucket& b, std::string_view action, std::string_view key)
{
    // A listing action's `key` is the prefix it lists; its resource is the bucket.
    const bool listing = is_listing_action(action);
    std::vector<std::pair<std::string_view, std::string>> context;
    auto r = bucket_facts(ctx, what, b, listing ? std::string_view() : key, action, std::nullopt, context,
                          listing ? key : std::string_view());
    // REST's own rule first (owner or installation admin), then the shared decision with the policy.
    if (auto mine = authorize_bucket(ctx, what, b); !mine)
        return mine;
    auto decided = auth::authorize(ctx.principal, what, r);
    // A refused key (or listing prefix) is the audit row's: the team whose model holds it reads it.
    if (!decided && !key.empty())
        note_refusal(ctx, {.bucket = b.name, .key = std::string(registry::live_key_of(key))});
    return decided;
}

asio::awaitable<result<void>> authorize_bucket_access(request_context& ctx, auth::permission what,
                                                      const registry::bucket& b, std::string_view key,
                                                      std::string_view action, bool object_acls,
                                                      std::optional<std::string_view> version_id)
{
    using auth::permission;
    std::vector<std::pair<std::string_view, std::string>> context;
    auto r = bucket_facts(ctx, what, b, key, action, version_id, context);
    const bool owner = (!ctx.principal.user_id.empty() && b.owner_id == ctx.principal.user_id) ||
                       ctx.principal.installation_admin;
    // Grants matter only to others than the owner, and only where they can count: nothing is read for the
    // owner's requests, nor for a bucket whose grants are void.
    if (!owner && !r.has_models && !r.acls_disabled && !r.owner_only) {
        r.bucket_grants = grants_of(b.acl, ctx.principal.user_id);
        const bool object_acl = object_acls && !key.empty() &&
                                (what == permission::read_object || what == permission::read_acl ||
                                 what == permission::write_acl);
        if (object_acl) {
            auto version_id = s3op::version_id_of(ctx);
            if (version_id) {
                auto opened = co_await ctx.svc->objects.open_version(b.id, key, *version_id);
                if (opened && !opened->version.is_delete_marker) {
                    // A named value, not a co_await's result in an argument (GCC 12's double destruction).
                    const std::string stored = co_await ctx.svc->objects.acl(opened->version.row_id);
                    r.object_grants = grants_of(stored, ctx.principal.user_id);
                } else {
                    r.object_missing = true;
                }
            }
        }
    }
    // A multipart upload is its initiator's: whose it is matters only to others than the owner.
    if (!owner && what == permission::write_object && !key.empty()) {
        if (auto upload_id = ctx.param("uploadId"); upload_id && !upload_id->empty()) {
            auto upload = co_await ctx.svc->multipart.find(b.id, key, *upload_id);
            r.others_upload = upload && upload->owner_id != ctx.principal.user_id;
        }
    }
    co_return auth::authorize(ctx.principal, what, r);
}

asio::awaitable<result<registry::bucket>> load_authorized_bucket(request_context& ctx, std::string_view name,
                                                                 auth::permission what, std::string_view key,
                                                                 std::string_view action, bool object_acls,
                                                                 std::optional<std::string_view> version_id)
{
    if (name == ctx.svc->opts.models_bucket) {
        registry::bucket view;
        view.name = std::string(name);
        view.owner_id = ctx.who.user_id;
        view.owner_display_name = ctx.who.display_name;
        view.region = ctx.svc->opts.region;
        view.versioning = "unversioned";
        co_return view;
    }
    auto b = co_await ctx.svc->buckets.get(name);
    if (!b)
        co_return std::move(b).error();
    if (auto allowed = co_await authorize_bucket_access(ctx, what, *b, key, action, object_acls, version_id);
        !allowed)
        co_return std::move(allowed).error();
    co_return b;
}

asio::awaitable<std::optional<registry::scope_area>> scope_area_of(request_context& ctx)
{
    const auto& p = ctx.principal;
    if (p.scope_unreadable)
        co_return registry::scope_area{}; // unreadable: reaches nothing
    if (!p.scope)
        co_return std::nullopt;
    auto where = co_await scope_model(ctx);
    co_return registry::area_of(*p.scope, where ? &*where : nullptr);
}

asio::awaitable<result<void>> authorize_area(request_context& ctx, auth::permission what,
                                             std::string_view bucket, std::string_view key_prefix,
                                             bool in_snapshot)
{
    auto where = co_await scope_model(ctx);
    co_return auth::authorize(ctx.principal, what,
                              auth::key_area{.bucket = bucket,
                                             .prefix = key_prefix,
                                             .scope_model = where ? &*where : nullptr,
                                             .snapshot = in_snapshot});
}

result<void> authorize_api_request(const request_context& ctx, auth::permission what,
                                   const api::path_params& params)
{
    return auth::authorize(ctx.principal, what,
                           auth::api_target{.bucket = api::path_param(params, "bucket"),
                                            .team = api::path_param(params, "team"),
                                            .model = api::path_param(params, "model"),
                                            .alias = api::path_param(params, "alias"),
                                            .version = api::path_param(params, "version")});
}

asio::awaitable<result<team_access>> authorize_team(request_context& ctx, auth::permission what,
                                                    std::string_view name)
{
    auto t = co_await ctx.svc->models.get_team(name);
    if (!t)
        co_return make_error(errc::not_found, "No such team");
    auto role = co_await ctx.svc->models.role_of(t->id, ctx.principal.user_id);
    if (auto allowed =
            auth::authorize(ctx.principal, what, auth::team_resource{.name = t->name, .role = role});
        !allowed) {
        note_refusal(ctx, {.team = t->name}); // answered 404 to a non-member: still a refusal, audited
        co_return std::move(allowed).error();
    }
    co_return team_access{std::move(*t), role.value_or(auth::team_role::admin)};
}

result<void> authorize_user(const request_context& ctx, auth::permission what, std::string_view owner_id)
{
    auto allowed = auth::authorize(ctx.principal, what, auth::user_resource{.owner_id = owner_id});
    if (!allowed)
        note_refusal(ctx, {}); // another user's token or key is answered as absent: still a refusal, audited
    return allowed;
}

asio::awaitable<result<void>> authorize_installation(request_context& ctx, auth::permission what)
{
    auth::installation i;
    if (what == auth::permission::audit_read && !ctx.principal.installation_admin) {
        // Team admins read their teams' rows.
        for (const auto& t : co_await ctx.svc->models.teams_of(ctx.principal.user_id, false)) {
            auto role = co_await ctx.svc->models.role_of(t.id, ctx.principal.user_id);
            i.team_admin_somewhere = i.team_admin_somewhere || (role && *role == auth::team_role::admin);
        }
    }
    co_return auth::authorize(ctx.principal, what, i);
}

} // namespace depot::server
