#include "s3/acl.hpp"

#include <doctest/doctest.h>
#include <string>

using namespace depot;
using namespace depot::s3;

namespace {

std::string policy(const std::string& grants, const std::string& owner = "<Owner><ID>alice</ID></Owner>")
{
    return "<AccessControlPolicy xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">" + owner +
           "<AccessControlList>" + grants + "</AccessControlList></AccessControlPolicy>";
}

std::string user_grant(const std::string& id, const std::string& permission)
{
    return "<Grant><Grantee xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
           "xsi:type=\"CanonicalUser\"><ID>" +
           id + "</ID></Grantee><Permission>" + permission + "</Permission></Grant>";
}

} // namespace

TEST_CASE("canned ACLs: the grants S3 documents")
{
    auto c = canned_acl_of("public-read", "x-amz-acl");
    REQUIRE(c);
    auto acl = canned_grants(*c, "alice", "alice", false);
    REQUIRE(acl.grants.size() == 2);
    CHECK(acl.grants[0] == acl_grant{grantee_type::user, "alice", acl_permission::full_control});
    CHECK(acl.grants[1] == acl_grant{grantee_type::all_users, "", acl_permission::read});
    CHECK(is_public(acl));

    auto prw = canned_grants(canned_acl::public_read_write, "alice", "alice", false);
    CHECK(prw.grants.size() == 3);
    auto auth = canned_grants(canned_acl::authenticated_read, "alice", "alice", false);
    CHECK(auth.grants.back().type == grantee_type::authenticated_users);
    CHECK(is_public(auth));

    // bucket-owner-*: the bucket owner's grant on another writer's object; nothing more on a bucket.
    auto bofc = canned_grants(canned_acl::bucket_owner_full_control, "bob", "alice", true);
    REQUIRE(bofc.grants.size() == 2);
    CHECK(bofc.grants[1] == acl_grant{grantee_type::user, "alice", acl_permission::full_control});
    CHECK(grants_to_others(bofc, "bob"));
    CHECK(canned_grants(canned_acl::bucket_owner_read, "alice", "alice", true).grants.size() == 1);
    CHECK(is_owner_only(canned_grants(canned_acl::private_acl, "alice", "alice", true), "alice"));

    auto bad = canned_acl_of("public", "x-amz-acl");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == errc::invalid_argument);
    CHECK(canned_acl_of("log-delivery-write", "x-amz-acl").error().code == errc::not_implemented);
}

TEST_CASE("grant headers: ids and group URIs; e-mail addresses are unresolvable")
{
    access_control_list acl;
    REQUIRE(parse_grant_header(R"(id="bob", uri="http://acs.amazonaws.com/groups/global/AllUsers")",
                               acl_permission::read, "x-amz-grant-read", acl));
    REQUIRE(acl.grants.size() == 2);
    CHECK(acl.grants[0] == acl_grant{grantee_type::user, "bob", acl_permission::read});
    CHECK(acl.grants[1].type == grantee_type::all_users);
    CHECK(parse_grant_header("id=carol", acl_permission::write, "x-amz-grant-write", acl));
    CHECK(acl.grants.size() == 3);

    access_control_list other;
    // A grant by e-mail address names the address; the server resolves it.
    REQUIRE(parse_grant_header(R"(emailAddress="x@y.z")", acl_permission::read, "h", other));
    REQUIRE(other.grants.size() == 1);
    CHECK(other.grants[0].type == grantee_type::user);
    CHECK(other.grants[0].id.empty());
    CHECK(other.grants[0].email == "x@y.z");
    other.grants.clear();
    CHECK(parse_grant_header(R"(emailAddress="")", acl_permission::read, "h", other).error().code ==
          errc::invalid_argument);
    CHECK(parse_grant_header(R"(uri="http://acs.amazonaws.com/groups/s3/LogDelivery")", acl_permission::read,
                             "h", other)
              .error()
              .code == errc::invalid_argument);
    CHECK(parse_grant_header("", acl_permission::read, "h", other).error().code == errc::invalid_argument);
    CHECK(parse_grant_header("id", acl_permission::read, "h", other).error().code == errc::invalid_argument);
    CHECK(parse_grant_header(R"(id="a b")", acl_permission::read, "h", other).error().code ==
          errc::invalid_argument);
    CHECK(parse_grant_header(R"(name="bob")", acl_permission::read, "h", other).error().code ==
          errc::invalid_argument);
}

TEST_CASE("grant headers: at most 100 grants")
{
    std::string many;
    for (int i = 0; i < 101; ++i)
        many += (i ? ", id=u" : "id=u") + std::to_string(i);
    access_control_list acl;
    auto r = parse_grant_header(many, acl_permission::read, "x-amz-grant-read", acl);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::invalid_argument);
}

TEST_CASE("AccessControlPolicy: parse, serialize, parse again")
{
    const auto body =
        policy(user_grant("alice", "FULL_CONTROL") + user_grant("bob", "READ_ACP") +
               "<Grant><Grantee xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
               "xsi:type=\"Group\"><URI>http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
               "</URI></Grantee><Permission>READ</Permission></Grant>");
    auto p = parse_access_control_policy(body);
    REQUIRE(p);
    CHECK(p->owner_id == "alice");
    REQUIRE(p->acl.grants.size() == 3);
    CHECK(p->acl.grants[1] == acl_grant{grantee_type::user, "bob", acl_permission::read_acp});

    const auto xml = access_control_policy_xml(p->acl, "alice", "Alice & Co");
    CHECK(xml.find("<DisplayName>Alice &amp; Co</DisplayName>") != std::string::npos);
    CHECK(xml.find("xsi:type=\"Group\"") != std::string::npos);
    auto again = parse_access_control_policy(xml);
    REQUIRE(again);
    CHECK(again->acl.grants == p->acl.grants);

    // The stored form round-trips too.
    CHECK(acl_from_stored(stored_acl(p->acl)).grants == p->acl.grants);
    CHECK(acl_from_stored("READ u bob\nnonsense\n").grants.empty());
    CHECK(acl_from_stored("READ u bad id\n").grants.empty());

    auto r = rights_of(p->acl, "bob");
    CHECK(r.user == static_cast<std::uint8_t>(acl_permission::read_acp));
    CHECK(r.authenticated_users == static_cast<std::uint8_t>(acl_permission::read));
    CHECK(rights_of(p->acl, "").user == 0);
}

TEST_CASE("AccessControlPolicy: S3's errors")
{
    CHECK(parse_access_control_policy("<nope").error().code == errc::malformed_acl);
    CHECK(parse_access_control_policy("<Other/>").error().code == errc::malformed_acl);
    CHECK(parse_access_control_policy(policy("", "")).error().code == errc::malformed_acl); // no Owner
    CHECK(parse_access_control_policy(policy(user_grant("bob", "EVERYTHING"))).error().code ==
          errc::malformed_acl);
    CHECK(parse_access_control_policy(policy("<Grant><Permission>READ</Permission></Grant>")).error().code ==
          errc::malformed_acl);
    CHECK(parse_access_control_policy(policy(user_grant("bad id!", "READ"))).error().code ==
          errc::invalid_argument);
    auto by_email = parse_access_control_policy(
        policy("<Grant><Grantee xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
               "xsi:type=\"AmazonCustomerByEmail\"><EmailAddress> a@b.c </EmailAddress></Grantee>"
               "<Permission>READ</Permission></Grant>"));
    REQUIRE(by_email);
    REQUIRE(by_email->acl.grants.size() == 1);
    CHECK(by_email->acl.grants[0].email == "a@b.c");
    CHECK(by_email->acl.grants[0].id.empty());
    std::string many;
    for (int i = 0; i < 101; ++i)
        many += user_grant("u" + std::to_string(i), "READ");
    CHECK(parse_access_control_policy(policy(many)).error().code == errc::malformed_acl);
    CHECK(parse_access_control_policy(std::string(max_acl_body + 1, ' ')).error().code ==
          errc::malformed_acl);
}

TEST_CASE("PublicAccessBlock and OwnershipControls documents")
{
    auto flags = parse_public_access_block(
        "<PublicAccessBlockConfiguration><BlockPublicAcls>true</BlockPublicAcls>"
        "<RestrictPublicBuckets>true</RestrictPublicBuckets></PublicAccessBlockConfiguration>");
    REQUIRE(flags);
    CHECK(*flags == "1001");
    CHECK(public_access_block_xml("1001").find("<IgnorePublicAcls>false</IgnorePublicAcls>") !=
          std::string::npos);
    CHECK(parse_public_access_block("<PublicAccessBlockConfiguration><BlockPublicAcls>yes</BlockPublicAcls>"
                                    "</PublicAccessBlockConfiguration>")
              .error()
              .code == errc::malformed_xml);

    auto o = parse_ownership_controls("<OwnershipControls><Rule><ObjectOwnership>ObjectWriter</"
                                      "ObjectOwnership></Rule></OwnershipControls>");
    REQUIRE(o);
    CHECK(*o == "ObjectWriter");
    CHECK(ownership_controls_xml("ObjectWriter").find("<ObjectOwnership>ObjectWriter</ObjectOwnership>") !=
          std::string::npos);
    CHECK(parse_ownership_controls("<OwnershipControls><Rule><ObjectOwnership>Mine</ObjectOwnership></Rule>"
                                   "</OwnershipControls>")
              .error()
              .code == errc::malformed_xml);
    CHECK(parse_ownership_controls("<OwnershipControls></OwnershipControls>").error().code ==
          errc::malformed_xml);
}
