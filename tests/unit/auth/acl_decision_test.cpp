// ACL grants as facts of auth::authorize (bucket_resource, acl_change): they add rights for other callers,
// never around Depot's rules.
#include "auth/authorize.hpp"

#include <doctest/doctest.h>

using namespace depot;
using namespace depot::auth;

namespace {

principal bob(std::string_view scope = "")
{
    return make_principal("bob", false, scope);
}
principal anonymous()
{
    return principal{};
}

bucket_resource bucket(acl_grants g = {})
{
    return bucket_resource{.name = "b", .owner_id = "alice", .acls_disabled = false, .bucket_grants = g};
}

constexpr acl_grants public_read{.all_users = acl_right::read};
constexpr acl_grants public_read_write{.all_users = acl_right::read | acl_right::write};

bool allowed(const principal& who, permission what, const bucket_resource& b)
{
    return static_cast<bool>(authorize(who, what, b));
}

} // namespace

TEST_CASE("the owner and installation admins reach everything; an anonymous caller owns nothing")
{
    auto b = bucket();
    CHECK(allowed(make_principal("alice", false, ""), permission::configure_bucket, b));
    CHECK(allowed(make_principal("root", true, ""), permission::write_acl, b));
    // A bucket whose owner id were empty would still not be an anonymous caller's.
    auto ownerless = bucket();
    ownerless.owner_id = "";
    CHECK_FALSE(allowed(anonymous(), permission::list_objects, ownerless));
}

TEST_CASE("without grants other callers are refused")
{
    auto b = bucket();
    for (auto p : {permission::read_object, permission::list_objects, permission::write_object,
                   permission::read_acl, permission::write_acl, permission::configure_bucket})
        CHECK_FALSE(allowed(bob(), p, b));
}

TEST_CASE("public-read: listings for anyone, object reads need the object's grant")
{
    auto b = bucket(public_read);
    CHECK(allowed(anonymous(), permission::list_objects, b));
    CHECK(allowed(anonymous(), permission::list_object_versions, b));
    CHECK(allowed(bob(), permission::list_objects, b));
    // The bucket's READ is not the objects' READ (S3: it lists, it does not read).
    CHECK_FALSE(allowed(anonymous(), permission::read_object, b));
    b.object = true;
    b.object_grants = public_read;
    CHECK(allowed(anonymous(), permission::read_object, b));
    b.object_grants = acl_grants{};
    CHECK_FALSE(allowed(anonymous(), permission::read_object, b));
    // A missing key in a listable bucket: the operation answers 404.
    b.object_grants.reset();
    b.object_missing = true;
    CHECK(allowed(anonymous(), permission::read_object, b));
    auto closed = bucket();
    closed.object_missing = true;
    CHECK_FALSE(allowed(anonymous(), permission::read_object, closed));
}

TEST_CASE("an anonymous caller never writes, whatever a grant says; Depot users may")
{
    auto b = bucket(public_read_write);
    CHECK_FALSE(allowed(anonymous(), permission::write_object, b));
    CHECK_FALSE(allowed(anonymous(), permission::delete_objects, b));
    CHECK(allowed(bob(), permission::write_object, b));
    CHECK_FALSE(allowed(bob(), permission::configure_bucket, b));
    CHECK_FALSE(allowed(bob(), permission::delete_bucket, b));
}

TEST_CASE("authenticated-read counts for Depot users only")
{
    auto b = bucket(acl_grants{.authenticated_users = acl_right::read});
    CHECK(allowed(bob(), permission::list_objects, b));
    CHECK_FALSE(allowed(anonymous(), permission::list_objects, b));
}

TEST_CASE("grants to a user count for that user")
{
    auto b = bucket(acl_grants{.user = acl_right::read_acp | acl_right::write_acp});
    CHECK(allowed(bob(), permission::read_acl, b));
    CHECK(allowed(bob(), permission::write_acl, b));
    CHECK_FALSE(allowed(bob(), permission::list_objects, b));
    // The user part never counts for an anonymous caller.
    CHECK_FALSE(allowed(anonymous(), permission::read_acl, b));
}

TEST_CASE("grants are void under BucketOwnerEnforced, IgnorePublicAcls, and in buckets with models")
{
    auto enforced = bucket(public_read);
    enforced.acls_disabled = true;
    CHECK_FALSE(allowed(anonymous(), permission::list_objects, enforced));
    auto ignored = bucket(acl_grants{.user = acl_right::read, .all_users = acl_right::read});
    ignored.ignore_public = true;
    CHECK_FALSE(allowed(anonymous(), permission::list_objects, ignored));
    CHECK(allowed(bob(), permission::list_objects, ignored)); // a grant to the user is not public
    auto models = bucket(acl_grants{.user = acl_right::read, .all_users = acl_right::read});
    models.has_models = true;
    CHECK_FALSE(allowed(anonymous(), permission::list_objects, models));
    CHECK_FALSE(allowed(bob(), permission::list_objects, models));
}

TEST_CASE("acl_change: public grants refused when blocked, grants to others refused in models buckets")
{
    CHECK(authorize(bob(), permission::write_acl, acl_change{.bucket = "b", .public_grants = true}));
    CHECK(authorize(bob(), permission::write_acl, acl_change{.bucket = "b", .other_grantees = true}));
    auto blocked = authorize(bob(), permission::write_acl,
                             acl_change{.bucket = "b", .block_public = true, .public_grants = true});
    REQUIRE_FALSE(blocked);
    CHECK(blocked.error().code == errc::access_denied);
    CHECK(authorize(bob(), permission::write_acl, acl_change{.bucket = "b", .block_public = true}));
    auto models = authorize(bob(), permission::write_acl,
                            acl_change{.bucket = "b", .has_models = true, .other_grantees = true});
    REQUIRE_FALSE(models);
    CHECK(models.error().message.find("team roles") != std::string::npos);
}

TEST_CASE("a WRITE grant adds versions and delete markers but never deletes a version for good")
{
    // The attacker's requests: bob, with WRITE on alice's versioned bucket, deleted her versions by id
    // (DeleteObject and DeleteObjects with a VersionId): 204, her history gone. As on AWS, a WRITE grant
    // maps to s3:PutObject and s3:DeleteObject, not s3:DeleteObjectVersion.
    auto b = bucket(acl_grants{.user = acl_right::write});
    b.object = true;
    CHECK(allowed(bob(), permission::write_object, b));
    CHECK(allowed(bob(), permission::delete_objects, b));
    b.deletes_version = true;
    CHECK_FALSE(allowed(bob(), permission::write_object, b));
    CHECK_FALSE(allowed(bob(), permission::delete_objects, b));
    CHECK(allowed(make_principal("alice", false, ""), permission::write_object, b));
    auto everyone = bucket(
        acl_grants{.user = acl_right::read | acl_right::write | acl_right::read_acp | acl_right::write_acp});
    everyone.object = true;
    everyone.deletes_version = true;
    CHECK_FALSE(allowed(bob(), permission::write_object, everyone));
}

TEST_CASE("a WRITE grant runs the grantee's own multipart uploads, never another user's")
{
    // The attacker's request: bob, with WRITE on alice's bucket, aborted her multipart upload (204): her
    // uploaded parts were gone. Adding a part to it or completing it would be as bad.
    auto b = bucket(acl_grants{.user = acl_right::write});
    b.object = true;
    CHECK(allowed(bob(), permission::write_object, b)); // his own upload
    b.others_upload = true;
    CHECK_FALSE(allowed(bob(), permission::write_object, b));
    CHECK(allowed(make_principal("alice", false, ""), permission::write_object, b));
    CHECK(allowed(make_principal("root", true, ""), permission::write_object, b));
}
