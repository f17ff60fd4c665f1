#include "server/authorization.hpp"

#include <algorithm>
#include <doctest/doctest.h>
#include <map>
#include <optional>
#include <string>

using namespace depot;
using namespace depot::server;

namespace {

void check_table(const std::vector<route_permission_entry>& routes)
{
    REQUIRE_FALSE(routes.empty());
    for (const auto& r : routes) {
        CAPTURE(r.route);
        CAPTURE(auth::to_string(r.permission));
        // A read-only credential may call exactly the routes that only read: a GET or HEAD route with a
        // writing permission (or the reverse) would let the scope check and the method disagree. The Hub
        // API's paths-info is a POST that only reads.
        const bool hub_read_post =
            r.route.starts_with("POST /api/models/") && r.route.find("/paths-info/") != std::string::npos;
        CHECK(auth::is_read(r.permission) == (r.read_method || hub_read_post));
    }
}

} // namespace

TEST_CASE("every S3 route names a permission whose nature matches its method")
{
    check_table(s3_route_permissions());
}

TEST_CASE("every REST route names a permission whose nature matches its method")
{
    check_table(api::route_permissions());
}

TEST_CASE("every Hugging Face route names a read permission")
{
    const auto routes = hf::route_permissions();
    check_table(routes);
    for (const auto& r : routes)
        CHECK(r.permission == auth::permission::hf_read);
}

TEST_CASE("the models view and the alias scope see the permissions their rules name")
{
    // The rules in auth/authorize.cpp single out these permissions; the S3 table must use them for the
    // actions they are about.
    bool get_object = false;
    for (const auto& r : s3_route_permissions())
        if (r.route == "GET GetObject" || r.route == "HEAD HeadObject") {
            CHECK(r.permission == auth::permission::read_object);
            get_object = true;
        }
    CHECK(get_object);
}

TEST_CASE("tagging routes: tag reads need a read of the key, tag writes a write, bucket tags the owner")
{
    const std::map<std::string, auth::permission> expected = {
        {"GET GetObjectTagging", auth::permission::read_object_metadata},
        {"PUT PutObjectTagging", auth::permission::write_object_metadata},
        {"DELETE DeleteObjectTagging", auth::permission::write_object_metadata},
        {"GET GetBucketTagging", auth::permission::read_bucket_acl},
        {"PUT PutBucketTagging", auth::permission::configure_bucket},
        {"DELETE DeleteBucketTagging", auth::permission::configure_bucket},
    };
    std::size_t found = 0;
    for (const auto& r : s3_route_permissions())
        if (auto it = expected.find(r.route); it != expected.end()) {
            CAPTURE(r.route);
            CHECK(r.permission == it->second);
            ++found;
        }
    CHECK(found == expected.size());
}

TEST_CASE("POST Object is a write of the form's key, exactly as PutObject")
{
    std::optional<auth::permission> put, post;
    for (const auto& r : s3_route_permissions()) {
        if (r.route == "PUT PutObject")
            put = r.permission;
        if (r.route == "POST PostObject")
            post = r.permission;
    }
    REQUIRE(put);
    REQUIRE(post);
    CHECK(*post == auth::permission::write_object);
    CHECK(*post == *put);
}

TEST_CASE(
    "object lock routes: retention and legal hold are object writes of their own, the configuration the "
    "owner's")
{
    const std::map<std::string, auth::permission> expected = {
        {"PUT PutObjectLockConfiguration", auth::permission::configure_bucket},
        {"GET GetObjectLockConfiguration", auth::permission::read_bucket_acl},
        {"PUT PutObjectRetention", auth::permission::write_object_lock},
        {"GET GetObjectRetention", auth::permission::read_object_metadata},
        {"PUT PutObjectLegalHold", auth::permission::write_object_lock},
        {"GET GetObjectLegalHold", auth::permission::read_object_metadata},
    };
    std::size_t found = 0;
    for (const auto& r : s3_route_permissions())
        if (auto it = expected.find(r.route); it != expected.end()) {
            CAPTURE(r.route);
            CHECK(r.permission == it->second);
            ++found;
        }
    CHECK(found == expected.size());
}

TEST_CASE("access control routes: ACLs with their own permissions, access settings the owner's")
{
    const std::map<std::string, auth::permission> expected = {
        {"GET GetBucketAcl", auth::permission::read_acl},
        {"PUT PutBucketAcl", auth::permission::write_acl},
        {"GET GetObjectAcl", auth::permission::read_acl},
        {"PUT PutObjectAcl", auth::permission::write_acl},
        {"PUT PutPublicAccessBlock", auth::permission::configure_bucket},
        {"GET GetPublicAccessBlock", auth::permission::read_bucket_acl},
        {"DELETE DeletePublicAccessBlock", auth::permission::configure_bucket},
        {"PUT PutBucketOwnershipControls", auth::permission::configure_bucket},
        {"GET GetBucketOwnershipControls", auth::permission::read_bucket_acl},
        {"DELETE DeleteBucketOwnershipControls", auth::permission::configure_bucket},
    };
    std::size_t found = 0;
    for (const auto& r : s3_route_permissions())
        if (auto it = expected.find(r.route); it != expected.end()) {
            CAPTURE(r.route);
            CHECK(r.permission == it->second);
            ++found;
        }
    CHECK(found == expected.size());
}

TEST_CASE(
    "bucket encryption routes: reading the default needs a bucket configuration read, changing it the owner")
{
    const std::map<std::string, auth::permission> expected = {
        {"PUT PutBucketEncryption", auth::permission::configure_bucket},
        {"GET GetBucketEncryption", auth::permission::read_bucket_acl},
        {"DELETE DeleteBucketEncryption", auth::permission::configure_bucket},
    };
    std::size_t found = 0;
    for (const auto& r : s3_route_permissions())
        if (auto it = expected.find(r.route); it != expected.end()) {
            CAPTURE(r.route);
            CHECK(r.permission == it->second);
            ++found;
        }
    CHECK(found == expected.size());
}

TEST_CASE("bucket policy routes: the policy's reads need a bucket configuration read, changes the owner")
{
    const std::map<std::string, auth::permission> expected = {
        {"PUT PutBucketPolicy", auth::permission::configure_bucket},
        {"GET GetBucketPolicy", auth::permission::read_bucket_acl},
        {"DELETE DeleteBucketPolicy", auth::permission::configure_bucket},
        {"GET GetBucketPolicyStatus", auth::permission::read_bucket_acl},
    };
    std::size_t found = 0;
    for (const auto& r : s3_route_permissions())
        if (auto it = expected.find(r.route); it != expected.end()) {
            CAPTURE(r.route);
            CHECK(r.permission == it->second);
            ++found;
        }
    CHECK(found == expected.size());
}

TEST_CASE("every S3 route names the AWS action bucket policies know it by")
{
    const auto known = auth::known_s3_actions();
    const std::map<std::string, std::string> expected = {
        {"GET GetObject", "s3:GetObject"},
        {"PUT PutObject", "s3:PutObject"},
        {"GET ListObjectsV2", "s3:ListBucket"},
        {"GET ListObjectVersions", "s3:ListBucketVersions"},
        {"DELETE DeleteObject", "s3:DeleteObject"},
        {"GET GetObjectTagging", "s3:GetObjectTagging"},
        {"DELETE DeleteBucket", "s3:DeleteBucket"},
        {"POST CompleteMultipartUpload", "s3:PutObject"},
        {"PUT PutBucketPolicy", "s3:PutBucketPolicy"},
    };
    for (const auto& r : s3_route_permissions()) {
        CAPTURE(r.route);
        if (r.permission == auth::permission::cors_preflight) {
            CHECK(r.action.empty());
            continue;
        }
        REQUIRE_FALSE(r.action.empty());
        // A bucket's own operations are actions a policy can name (ListBuckets and CreateBucket are about no
        // existing bucket: their actions exist, a bucket policy never decides them).
        if (r.route != "GET ListBuckets" && r.route != "PUT CreateBucket")
            CHECK(std::any_of(known.begin(), known.end(),
                              [&](const auth::known_action& a) { return a.name == r.action; }));
        if (auto it = expected.find(r.route); it != expected.end())
            CHECK(r.action == it->second);
    }
}
