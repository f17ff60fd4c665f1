#include "auth/authorize.hpp"

#include <doctest/doctest.h>
#include <string>
#include <vector>

using namespace depot;
using namespace depot::auth;

namespace {

enum class expect
{
    allow,
    deny,    ///< access_denied
    hidden,  ///< not_found (the caller learns nothing)
    invalid, ///< invalid_argument
};

expect outcome(const result<void>& r)
{
    if (r)
        return expect::allow;
    switch (r.error().code) {
    case errc::access_denied:
        return expect::deny;
    case errc::not_found:
        return expect::hidden;
    case errc::invalid_argument:
        return expect::invalid;
    default:
        FAIL("unexpected error code");
        return expect::deny;
    }
}

const char* name(expect e)
{
    switch (e) {
    case expect::allow:
        return "allow";
    case expect::deny:
        return "deny";
    case expect::hidden:
        return "hidden";
    case expect::invalid:
        return "invalid";
    }
    return "?";
}

// Principals: kind × scope.
principal user(std::string_view scope = "")
{
    return make_principal("alice", false, scope);
}
principal admin(std::string_view scope = "")
{
    return make_principal("root", true, scope);
}

const model_location model_m{.model_id = 7, .bucket = "models-b", .prefix = "team/m/"};
const model_location model_all{.model_id = 7, .bucket = "models-b", .prefix = ""};

struct row
{
    const char* what;
    principal who;
    permission perm;
    resource on;
    expect want;
};

void run(const std::vector<row>& rows)
{
    for (const auto& r : rows) {
        INFO("row ", std::string(r.what));
        auto got = outcome(authorize(r.who, r.perm, r.on));
        INFO("got ", name(got), ", want ", name(r.want));
        CHECK(got == r.want);
    }
}

} // namespace

TEST_CASE("S3 targets: scope × permission × path")
{
    const auto ro = R"({"read_only":true})";
    const auto bucket = R"({"bucket":"b"})";
    const auto prefix = R"({"bucket":"b","prefix":"p/"})";
    const auto model = R"({"model":"team/m"})";
    const auto alias = R"({"model":"team/m","alias":"prod"})";
    const s3_target obj{.operation = "GetObject", .bucket = "b", .path = "p/k"};
    const s3_target outside{.operation = "GetObject", .bucket = "b", .path = "q/k"};
    const s3_target other{.operation = "GetObject", .bucket = "c", .path = "p/k"};
    const s3_target bucket_level{.operation = "HeadBucket", .bucket = "b"};
    const s3_target service{.operation = "ListBuckets"};
    const s3_target in_model{
        .operation = "GetObject", .bucket = "models-b", .path = "team/m/w.bin", .scope_model = &model_m};
    const s3_target in_model_file = [&] {
        auto t = in_model;
        t.alias_file = true;
        return t;
    }();
    const s3_target model_gone{.operation = "GetObject", .bucket = "models-b", .path = "team/m/w.bin"};
    const s3_target view_mine{
        .operation = "GetObject", .bucket = "models", .path = "team/m/1/w.bin", .models_view = true};
    const s3_target view_other{
        .operation = "GetObject", .bucket = "models", .path = "team/n/1/w.bin", .models_view = true};
    const s3_target view_alias{
        .operation = "GetObject", .bucket = "models", .path = "team/m/prod/w.bin", .models_view = true};
    const s3_target snapshot{
        .operation = "PutObject", .bucket = "b", .path = ".snapshots/s/k", .snapshot_key = true};
    const s3_target snapshot_read{
        .operation = "GetObject", .bucket = "b", .path = ".snapshots/s/k", .snapshot_key = true};
    const auto with_bypass = [](s3_target t) {
        t.bypass_governance = true;
        return t;
    };
    const s3_target bypass = with_bypass(obj);
    const s3_target bypass_other = with_bypass(other);
    const s3_target bypass_bucket_level = with_bypass(s3_target{.operation = "DeleteObjects", .bucket = "b"});
    const s3_target bypass_in_model = with_bypass(in_model);
    run({
        {"no scope reads", user(), permission::read_object, obj, expect::allow},
        {"no scope writes", user(), permission::write_object, obj, expect::allow},
        {"unreadable scope", user("{"), permission::read_object, obj, expect::deny},
        {"read-only reads", user(ro), permission::read_object, obj, expect::allow},
        {"read-only writes", user(ro), permission::write_object, obj, expect::deny},
        {"read-only creates a bucket", user(ro), permission::create_bucket, bucket_level, expect::deny},
        {"read-only lists buckets", user(ro), permission::list_buckets, service, expect::allow},
        {"admin read-only writes", admin(ro), permission::write_object, obj, expect::deny},
        {"bucket scope, its bucket", user(bucket), permission::write_object, obj, expect::allow},
        {"bucket scope, another bucket", user(bucket), permission::read_object, other, expect::deny},
        {"bucket scope deletes its bucket", user(bucket), permission::delete_bucket, bucket_level,
         expect::allow},
        {"prefix scope inside", user(prefix), permission::write_object, obj, expect::allow},
        {"prefix scope outside", user(prefix), permission::read_object, outside, expect::deny},
        {"prefix scope heads the bucket", user(prefix), permission::read_bucket, bucket_level, expect::allow},
        {"prefix scope reads the bucket ACL", user(prefix), permission::read_bucket_acl, bucket_level,
         expect::deny},
        {"prefix scope configures the bucket", user(prefix), permission::configure_bucket, bucket_level,
         expect::deny},
        {"prefix scope deletes objects in bulk", user(prefix), permission::delete_objects, bucket_level,
         expect::deny},
        {"prefix scope lists inside", user(prefix), permission::list_objects,
         s3_target{.operation = "ListObjectsV2", .bucket = "b", .path = "p/x"}, expect::allow},
        {"prefix scope lists everything", user(prefix), permission::list_objects,
         s3_target{.operation = "ListObjectsV2", .bucket = "b"}, expect::deny},
        {"model scope creates a bucket", user(model), permission::create_bucket, bucket_level, expect::deny},
        {"model scope in its model", user(model), permission::write_object, in_model, expect::allow},
        {"model scope outside its prefix", user(model), permission::read_object,
         s3_target{
             .operation = "GetObject", .bucket = "models-b", .path = "team/n/w", .scope_model = &model_m},
         expect::deny},
        {"model scope, model gone", user(model), permission::read_object, model_gone, expect::deny},
        // A model over the whole bucket (prefix ""): its files, never the bucket's settings or snapshots
        // (the attacker's model key deleted the bucket's policy).
        {"whole-bucket model scope writes a file", user(model), permission::write_object,
         s3_target{
             .operation = "PutObject", .bucket = "models-b", .path = "w.bin", .scope_model = &model_all},
         expect::allow},
        {"whole-bucket model scope lists", user(model), permission::list_objects,
         s3_target{.operation = "ListObjectsV2", .bucket = "models-b", .scope_model = &model_all},
         expect::allow},
        {"whole-bucket model scope configures the bucket", user(model), permission::configure_bucket,
         s3_target{.operation = "DeleteBucketPolicy", .bucket = "models-b", .scope_model = &model_all},
         expect::deny},
        {"whole-bucket model scope writes the bucket's ACL", user(model), permission::write_acl,
         s3_target{.operation = "PutBucketAcl", .bucket = "models-b", .scope_model = &model_all},
         expect::deny},
        {"whole-bucket model scope deletes in bulk", user(model), permission::delete_objects,
         s3_target{.operation = "DeleteObjects", .bucket = "models-b", .scope_model = &model_all},
         expect::deny},
        {"whole-bucket model scope reads a snapshot", user(model), permission::read_object,
         s3_target{.operation = "GetObject",
                   .bucket = "models-b",
                   .path = ".snapshots/s1/w.bin",
                   .snapshot_key = true,
                   .scope_model = &model_all},
         expect::deny},
        {"model scope reads its view", user(model), permission::read_object, view_mine, expect::allow},
        {"model scope reads another model's view", user(model), permission::read_object, view_other,
         expect::deny},
        {"alias scope reads an aliased file", user(alias), permission::read_object, in_model_file,
         expect::allow},
        {"alias scope reads a live file", user(alias), permission::read_object, in_model, expect::deny},
        {"alias scope reads object metadata", user(alias), permission::read_object_metadata, in_model_file,
         expect::deny},
        {"alias scope reads a version", user(alias), permission::read_object,
         [&] {
             auto t = in_model_file;
             t.version_id = true;
             return t;
         }(),
         expect::deny},
        {"alias scope writes", user(alias), permission::write_object, in_model_file, expect::deny},
        {"alias scope reads its alias in the view", user(alias), permission::read_object, view_alias,
         expect::allow},
        {"alias scope reads a version in the view", user(alias), permission::read_object, view_mine,
         expect::deny},
        {"the models view refuses writes", user(), permission::write_object, view_mine, expect::deny},
        {"the models view refuses version listings", user(), permission::list_object_versions,
         s3_target{.operation = "ListObjectVersions", .bucket = "models", .models_view = true}, expect::deny},
        {"the models view answers CreateBucket itself", user(), permission::create_bucket,
         s3_target{.operation = "CreateBucket", .bucket = "models", .models_view = true}, expect::allow},
        {"snapshots refuse writes, even to admins", admin(), permission::write_object, snapshot,
         expect::deny},
        {"snapshots serve reads", user(), permission::read_object, snapshot_read, expect::allow},
        // Object tagging: tags are not content, but they are the key's: writing them needs what writing the
        // key does, and the read-only views stay read-only.
        {"no scope tags an object", user(), permission::write_object_metadata, obj, expect::allow},
        {"read-only tags an object", user(ro), permission::write_object_metadata, obj, expect::deny},
        {"read-only reads tags", user(ro), permission::read_object_metadata, obj, expect::allow},
        {"bucket scope tags in its bucket", user(bucket), permission::write_object_metadata, obj,
         expect::allow},
        {"bucket scope tags in another bucket", user(bucket), permission::write_object_metadata, other,
         expect::deny},
        {"prefix scope tags inside", user(prefix), permission::write_object_metadata, obj, expect::allow},
        {"prefix scope tags outside", user(prefix), permission::write_object_metadata, outside, expect::deny},
        {"prefix scope reads tags outside", user(prefix), permission::read_object_metadata, outside,
         expect::deny},
        {"model scope tags its model's files", user(model), permission::write_object_metadata, in_model,
         expect::allow},
        {"alias scope tags an aliased file", user(alias), permission::write_object_metadata, in_model_file,
         expect::deny},
        {"the models view refuses tagging", user(), permission::write_object_metadata, view_mine,
         expect::deny},
        {"the models view refuses tag reads", user(), permission::read_object_metadata, view_mine,
         expect::deny},
        {"snapshots refuse tagging, even to admins", admin(), permission::write_object_metadata,
         s3_target{
             .operation = "PutObjectTagging", .bucket = "b", .path = ".snapshots/s/k", .snapshot_key = true},
         expect::deny},
        {"read-only reads bucket tags", user(ro), permission::read_bucket_acl, bucket_level, expect::allow},
        {"read-only tags a bucket", user(ro), permission::configure_bucket, bucket_level, expect::deny},
        // Object Lock: retention and legal hold are writes of the key; bypassing GOVERNANCE retention needs a
        // credential that reaches the whole bucket.
        {"no scope locks an object", user(), permission::write_object_lock, obj, expect::allow},
        {"read-only locks an object", user(ro), permission::write_object_lock, obj, expect::deny},
        {"prefix scope locks inside", user(prefix), permission::write_object_lock, obj, expect::allow},
        {"prefix scope locks outside", user(prefix), permission::write_object_lock, outside, expect::deny},
        {"alias scope locks an aliased file", user(alias), permission::write_object_lock, in_model_file,
         expect::deny},
        {"the models view refuses locks", user(), permission::write_object_lock, view_mine, expect::deny},
        // Bypassing GOVERNANCE retention is a fact of the request (DeleteObject, DeleteObjects,
        // PutObjectRetention), asked with the route's own permission.
        {"no scope bypasses governance", user(), permission::write_object, bypass, expect::allow},
        {"bucket scope bypasses in its bucket", user(bucket), permission::write_object, bypass,
         expect::allow},
        {"bucket scope bypasses in another bucket", user(bucket), permission::write_object, bypass_other,
         expect::deny},
        {"prefix scope bypasses its own keys", user(prefix), permission::write_object, bypass, expect::deny},
        {"prefix scope writes its own keys", user(prefix), permission::write_object, obj, expect::allow},
        {"prefix scope bypasses in DeleteObjects", user(prefix), permission::delete_objects,
         bypass_bucket_level, expect::deny},
        {"prefix scope shortens a retention", user(prefix), permission::write_object_lock, bypass,
         expect::deny},
        {"bucket scope shortens a retention", user(bucket), permission::write_object_lock, bypass,
         expect::allow},
        {"model scope bypasses its model's files", user(model), permission::write_object, bypass_in_model,
         expect::deny},
        {"model scope writes its model's files", user(model), permission::write_object, in_model,
         expect::allow},
        {"alias scope bypasses", user(alias), permission::write_object, bypass_in_model, expect::deny},
        {"read-only bypasses", user(ro), permission::write_object, bypass, expect::deny},
    });
}

TEST_CASE("buckets: the owner or an installation admin")
{
    const bucket_resource mine{.name = "b", .owner_id = "alice"};
    const bucket_resource theirs{.name = "c", .owner_id = "bob"};
    run({
        {"owner", user(), permission::write_object, mine, expect::allow},
        {"another user's", user(), permission::read_object, theirs, expect::deny},
        {"installation admin", admin(), permission::delete_bucket, theirs, expect::allow},
        {"REST owner", user(), permission::bucket_info_write, mine, expect::allow},
        {"REST another user's", user(), permission::bucket_info_read, theirs, expect::deny},
    });
}

TEST_CASE("areas a request reaches besides its path")
{
    run({
        {"no scope", user(), permission::bucket_info_write, key_area{.bucket = "c", .prefix = ""},
         expect::allow},
        {"bucket scope inside", user(R"({"bucket":"b"})"), permission::bucket_info_write,
         key_area{.bucket = "b", .prefix = "x/"}, expect::allow},
        {"bucket scope, other bucket", user(R"({"bucket":"b"})"), permission::bucket_info_write,
         key_area{.bucket = "c", .prefix = ""}, expect::deny},
        {"prefix scope, wider prefix", user(R"({"bucket":"b","prefix":"p/"})"), permission::read_object,
         key_area{.bucket = "b", .prefix = ""}, expect::deny},
        {"model scope, its prefix", user(R"({"model":"team/m"})"), permission::read_object,
         key_area{.bucket = "models-b", .prefix = "team/m/x", .scope_model = &model_m}, expect::allow},
        {"model scope, model gone", user(R"({"model":"team/m"})"), permission::read_object,
         key_area{.bucket = "models-b", .prefix = "team/m/x"}, expect::deny},
        {"alias scope", user(R"({"model":"team/m","alias":"prod"})"), permission::read_object,
         key_area{.bucket = "models-b", .prefix = "team/m/", .scope_model = &model_m}, expect::deny},
        // The attacker's request (fourth attack): a version made from a snapshot by a model's credential
        // served what the model's files no longer were, also for a model over the whole bucket.
        {"model scope, its prefix in a snapshot", user(R"({"model":"team/m"})"), permission::read_object,
         key_area{.bucket = "models-b", .prefix = "team/m/", .scope_model = &model_m, .snapshot = true},
         expect::deny},
        {"whole-bucket model scope, a snapshot", user(R"({"model":"team/all"})"), permission::read_object,
         key_area{.bucket = "models-b", .prefix = "", .scope_model = &model_all, .snapshot = true},
         expect::deny},
        {"bucket scope, a snapshot", user(R"({"bucket":"models-b"})"), permission::read_object,
         key_area{.bucket = "models-b", .prefix = "", .snapshot = true}, expect::allow},
    });
}

TEST_CASE("REST targets: scope × permission × path parameters")
{
    const auto bucket = R"({"bucket":"b"})";
    const auto prefix = R"({"bucket":"b","prefix":"p/"})";
    const auto model = R"({"model":"team/m"})";
    const auto alias = R"({"model":"team/m","alias":"prod"})";
    run({
        {"whoami with any scope", user(alias), permission::whoami, api_target{}, expect::allow},
        {"whoami with an unreadable scope", user("["), permission::whoami, api_target{}, expect::allow},
        {"unreadable scope", user("["), permission::account_read, api_target{}, expect::deny},
        {"read-only lists tokens", user(R"({"read_only":true})"), permission::account_read, api_target{},
         expect::allow},
        {"read-only creates a token", user(R"({"read_only":true})"), permission::account_write, api_target{},
         expect::deny},
        {"bucket scope, its bucket", user(bucket), permission::bucket_info_write, api_target{.bucket = "b"},
         expect::allow},
        {"bucket scope, no bucket", user(bucket), permission::account_read, api_target{}, expect::deny},
        {"bucket scope, another bucket", user(bucket), permission::bucket_info_read,
         api_target{.bucket = "c"}, expect::deny},
        {"prefix scope reads", user(prefix), permission::bucket_info_read, api_target{.bucket = "b"},
         expect::deny},
        {"prefix scope writes", user(prefix), permission::bucket_info_write, api_target{.bucket = "b"},
         expect::deny},
        {"model scope reads its team", user(model), permission::team_read, api_target{.team = "team"},
         expect::allow},
        {"model scope lists its team's members", user(model), permission::team_contents_read,
         api_target{.team = "team"}, expect::deny},
        {"model scope, another team", user(model), permission::team_read, api_target{.team = "other"},
         expect::deny},
        {"model scope writes its model", user(model), permission::version_create,
         api_target{.team = "team", .model = "m"}, expect::allow},
        {"model scope, another model", user(model), permission::model_read,
         api_target{.team = "team", .model = "n"}, expect::deny},
        {"alias scope reads its team", user(alias), permission::team_read, api_target{.team = "team"},
         expect::deny},
        {"alias scope reads the model", user(alias), permission::model_read,
         api_target{.team = "team", .model = "m"}, expect::allow},
        {"alias scope reads its alias", user(alias), permission::model_read,
         api_target{.team = "team", .model = "m", .alias = "prod"}, expect::allow},
        {"alias scope reads another alias", user(alias), permission::model_read,
         api_target{.team = "team", .model = "m", .alias = "dev"}, expect::deny},
        {"alias scope reads a version by number", user(alias), permission::model_read,
         api_target{.team = "team", .model = "m", .version = "3"}, expect::deny},
        {"alias scope reads the history", user(alias), permission::model_history_read,
         api_target{.team = "team", .model = "m"}, expect::deny},
        {"alias scope moves an alias", user(alias), permission::alias_write,
         api_target{.team = "team", .model = "m", .alias = "prod"}, expect::deny},
    });
}

TEST_CASE("teams: member role × permission, installation admins count as team admins")
{
    const team_resource outsider{.name = "t"};
    const team_resource reader{.name = "t", .role = team_role::reader};
    const team_resource writer{.name = "t", .role = team_role::writer};
    const team_resource maintainer{.name = "t", .role = team_role::maintainer};
    const team_resource team_admin{.name = "t", .role = team_role::admin};
    run({
        {"outsider reads", user(), permission::team_read, outsider, expect::hidden},
        {"outsider via the Hub API", user(), permission::hf_read, outsider, expect::hidden},
        {"installation admin outside the team", admin(), permission::team_members_write, outsider,
         expect::allow},
        {"reader reads", user(), permission::model_read, reader, expect::allow},
        {"reader creates a version", user(), permission::version_create, reader, expect::deny},
        {"writer creates a version", user(), permission::version_create, writer, expect::allow},
        {"writer retires a version", user(), permission::version_retire, writer, expect::deny},
        {"maintainer retires a version", user(), permission::version_retire, maintainer, expect::allow},
        {"maintainer moves an alias", user(), permission::alias_write, maintainer, expect::allow},
        {"maintainer manages members", user(), permission::team_members_write, maintainer, expect::deny},
        {"maintainer reads webhooks", user(), permission::webhooks_read, maintainer, expect::deny},
        {"team admin manages webhooks", user(), permission::webhooks_write, team_admin, expect::allow},
        {"writer changes the approval policy", user(), permission::approval_policy_write, writer,
         expect::deny},
        {"reader reviews before the policy is known", user(), permission::version_review, reader,
         expect::allow},
        {"reader reviews under a maintainer policy", user(), permission::version_review,
         team_resource{.name = "t", .role = team_role::reader, .policy_role = team_role::maintainer},
         expect::deny},
        {"maintainer reviews under a maintainer policy", user(), permission::version_review,
         team_resource{.name = "t", .role = team_role::maintainer, .policy_role = team_role::maintainer},
         expect::allow},
        {"member of a team with a member admin flag", admin(), permission::team_members_write, reader,
         expect::deny},
    });
}

TEST_CASE("the Hub API: scope × model")
{
    run({
        {"no scope", user(), permission::hf_read, hf_model{.team = "team", .model = "m"}, expect::allow},
        {"bucket scope", user(R"({"bucket":"b"})"), permission::hf_read,
         hf_model{.team = "team", .model = "m"}, expect::deny},
        {"model scope, its model", user(R"({"model":"team/m"})"), permission::hf_read,
         hf_model{.team = "team", .model = "m"}, expect::allow},
        {"model scope, another model", user(R"({"model":"team/m"})"), permission::hf_read,
         hf_model{.team = "team", .model = "n"}, expect::deny},
        {"alias scope, the aliased version", user(R"({"model":"team/m","alias":"prod"})"),
         permission::hf_read, hf_model{.team = "team", .model = "m", .alias_version = true}, expect::allow},
        {"alias scope, another version", user(R"({"model":"team/m","alias":"prod"})"), permission::hf_read,
         hf_model{.team = "team", .model = "m", .alias_version = false}, expect::deny},
    });
}

TEST_CASE("users' own things, the installation, and granted scopes")
{
    const auto bucket_scope = *parse_scope(R"({"bucket":"b"})");
    const auto model_scope = *parse_scope(R"({"model":"team/m"})");
    run({
        {"own credentials", user(), permission::account_read, user_resource{.owner_id = "alice"},
         expect::allow},
        {"another user's credentials", user(), permission::account_write, user_resource{.owner_id = "bob"},
         expect::deny},
        {"admin, another user's credentials", admin(), permission::account_write,
         user_resource{.owner_id = "bob"}, expect::allow},
        {"own upload", user(), permission::version_create, upload_resource{.owner_id = "alice"},
         expect::allow},
        {"another user's upload, even for an admin", admin(), permission::version_create,
         upload_resource{.owner_id = "alice"}, expect::deny},
        {"user creates a user", user(), permission::users_write, installation{}, expect::deny},
        {"admin creates a user", admin(), permission::users_write, installation{}, expect::allow},
        {"user creates a team", user(), permission::team_create, installation{}, expect::deny},
        {"user reads the audit log", user(), permission::audit_read, installation{}, expect::deny},
        {"team admin reads the audit log", user(), permission::audit_read,
         installation{.team_admin_somewhere = true}, expect::allow},
        {"scope on own bucket", user(), permission::account_write,
         granted_scope{.scope = &bucket_scope, .bucket_owner_id = "alice"}, expect::allow},
        {"scope on another's bucket, even for an admin", admin(), permission::account_write,
         granted_scope{.scope = &bucket_scope, .bucket_owner_id = "alice"}, expect::invalid},
        {"scope on a model of a team of the user", user(), permission::account_write,
         granted_scope{.scope = &model_scope, .model_team_role = team_role::reader, .model_exists = true},
         expect::allow},
        {"scope on a model outside the user's teams", user(), permission::account_write,
         granted_scope{.scope = &model_scope, .model_exists = true}, expect::invalid},
        {"admin scope on any team's model", admin(), permission::account_write,
         granted_scope{.scope = &model_scope, .model_exists = true}, expect::allow},
        {"scope on a missing model", admin(), permission::account_write,
         granted_scope{.scope = &model_scope, .model_exists = false}, expect::invalid},
    });
}

TEST_CASE("every permission has a name and a fixed nature")
{
    for (auto p : all_permissions()) {
        CAPTURE(to_string(p));
        CHECK_FALSE(to_string(p).empty());
    }
    CHECK(is_read(permission::hf_read));
    CHECK_FALSE(is_read(permission::write_object));
    CHECK(required_role(permission::alias_write) == team_role::maintainer);
}
