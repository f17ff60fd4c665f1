// Bucket policies: the parser's MalformedPolicy cases, the evaluator (AWS's Deny > Allow > nothing), and the
// policy as a fact of auth::authorize (bucket_resource): it grants within Depot's rules, never around them.
#include "auth/authorize.hpp"
#include "auth/bucket_policy.hpp"

#include <algorithm>
#include <doctest/doctest.h>

using namespace depot;
using namespace depot::auth;

namespace {

bucket_policy parsed(std::string_view json)
{
    auto p = parse_bucket_policy(json, "b");
    REQUIRE_MESSAGE(p, (p ? "" : p.error().message));
    return std::move(*p);
}

std::string refusal(std::string_view json)
{
    auto p = parse_bucket_policy(json, "b");
    if (p)
        return "accepted";
    CHECK(p.error().code == errc::malformed_policy);
    return p.error().message;
}

std::string statement(std::string_view body)
{
    return std::string(R"({"Version":"2012-10-17","Statement":[)") + std::string(body) + "]}";
}

using context_list = std::vector<std::pair<std::string_view, std::string>>;

policy_effect eval(const bucket_policy& p, std::string_view action, std::string_view key,
                   std::string_view policy_user, const context_list& ctx = {})
{
    const auto actions = known_s3_actions();
    const bool object = std::any_of(actions.begin(), actions.end(),
                                    [&](const known_action& a) { return a.object && a.name == action; });
    return evaluate(p, policy_request{.action = action,
                                      .bucket = "b",
                                      .key = key,
                                      .object_action = object,
                                      .user_id = policy_user,
                                      .context = ctx});
}

} // namespace

TEST_CASE("policy documents: the accepted forms")
{
    // Statement as an object, Principal "*", Action and Resource as strings, the old version.
    auto p = parsed(R"({"Version":"2008-10-17","Statement":{"Effect":"Allow","Principal":"*",
                       "Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}})");
    REQUIRE(p.statements.size() == 1);
    CHECK(p.statements[0].any_principal);
    // Lists, a user by id and by IAM ARN, NotAction, NotResource, Sid, Id, conditions with IfExists.
    p = parsed(R"({"Id":"x","Version":"2012-10-17","Statement":[
        {"Sid":"a","Effect":"Deny","Principal":{"AWS":["bob","arn:aws:iam::123456789012:user/carol"]},
         "NotAction":["s3:Get*"],"NotResource":"arn:aws:s3:::b/public/*",
         "Condition":{"StringNotEqualsIfExists":{"s3:x-amz-server-side-encryption":"AES256"}}},
        {"Effect":"Allow","Principal":{"CanonicalUser":"dave"},"Action":"s3:*",
         "Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"],
         "Condition":{"IpAddress":{"aws:SourceIp":["10.0.0.0/8","fd00::/8"]},"Bool":{"aws:SecureTransport":true},
                      "NumericLessThanEquals":{"s3:max-keys":"100"},"DateLessThan":{"aws:CurrentTime":"2099-01-01T00:00:00Z"}}}]})");
    REQUIRE(p.statements.size() == 2);
    CHECK(named_users(p) == std::vector<std::string>{"bob", "carol", "dave"});
    CHECK(p.statements[0].conditions[0].if_exists);
}

TEST_CASE("policy documents: every MalformedPolicy case")
{
    CHECK(refusal("") == "Policies must be valid JSON and the first byte must be '{'");
    CHECK(refusal("[1]") == "Policies must be valid JSON and the first byte must be '{'");
    CHECK(refusal("{not json") == "This policy contains invalid Json");
    CHECK(refusal(R"({"Version":"2012-10-17"})") == "Missing required field Statement");
    CHECK(refusal(R"({"Version":"2012-10-17","Statement":[]})") ==
          "Could not parse the policy: Statement is empty!");
    CHECK(refusal(R"({"Version":"2011-01-01","Statement":[]})") ==
          "The policy must contain a valid version string");
    CHECK(refusal(R"({"Statement":[],"Extra":1})") == "Unknown field Extra");
    const std::string ok_rest = R"("Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*")";
    CHECK(refusal(statement(R"({"Effect":"Maybe",)" + ok_rest + "}")) == "Invalid effect: Maybe");
    // An attacker's finding: a statement reading "Deny" to a reviewer, and acting as the last "Effect".
    CHECK(refusal(statement(R"({"Effect":"Deny",)" + ok_rest + R"(,"Effect":"Allow"})")) ==
          "This policy names the member 'Effect' twice in one object");
    CHECK(refusal(R"({"Version":"2012-10-17","Version":"2012-10-17","Statement":[]})") ==
          "This policy names the member 'Version' twice in one object");
    // The fourth attack: two spellings of one condition key passed the (case-sensitive) duplicate check and
    // were ANDed as one key, while a reader takes them for two alternatives.
    CHECK(
        refusal(statement(
            R"({"Effect":"Allow",)" + ok_rest +
            R"(,"Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8","AWS:SourceIp":"192.168.0.0/16"}}})")) ==
        "Policy has an invalid condition: IpAddress names the key AWS:SourceIp twice (condition keys are "
        "case-insensitive)");
    // The same name in two objects is two members.
    CHECK(refusal(R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow",)" + ok_rest +
                  R"(},{"Effect":"Deny",)" + ok_rest + "}]}") == "accepted");
    CHECK(refusal(statement(R"({"Action":"s3:GetObject","Effect":"Allow","Resource":"arn:aws:s3:::b/*"})")) ==
          "Missing required field Principal");
    CHECK(refusal(statement(R"({"Effect":"Allow","Principal":"*","Resource":"arn:aws:s3:::b/*"})")) ==
          "Missing required field Action");
    CHECK(refusal(statement(R"({"Effect":"Allow","Principal":"*","Action":"s3:GetObject"})")) ==
          "Missing required field Resource");
    CHECK(
        refusal(
            statement(
                R"({"Effect":"Deny","NotPrincipal":{"AWS":"bob"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"})"))
            .starts_with("NotPrincipal is not supported"));
    // Principals: neither a wildcard inside a name, nor a role, nor a service.
    for (auto principal : {R"("bo*")", R"({"AWS":"arn:aws:iam::1:role/x"})",
                           R"({"Service":"s3.amazonaws.com"})", R"({"AWS":[]})", R"("bob")"})
        CHECK(refusal(statement(std::string(R"({"Effect":"Allow","Principal":)") + principal +
                                R"(,"Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"})")) ==
              "Invalid principal in policy");
    // Actions: S3's only, and known.
    for (auto action : {R"("iam:PassRole")", R"("s3:NoSuchThing")", R"("s3:Get?bject2")", R"([])"})
        CHECK(refusal(statement(std::string(R"({"Effect":"Allow","Principal":"*","Action":)") + action +
                                R"(,"Resource":"arn:aws:s3:::b/*"})")) == "Policy has invalid action");
    CHECK(refusal(statement(
              R"({"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b"})")) ==
          "Action does not apply to any resource(s) in statement");
    CHECK(
        refusal(statement(
            R"({"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":"arn:aws:s3:::b/*"})")) ==
        "Action does not apply to any resource(s) in statement");
    // Resources outside the bucket, or not S3 ARNs.
    for (auto resource : {R"("arn:aws:s3:::other/*")", R"("arn:aws:s3:::*")", R"("arn:aws:s3:::b*/x")",
                          R"("*")", R"("arn:aws:sqs:::b")", R"("arn:aws:s3:::bb/*")"})
        CHECK(refusal(statement(
                  std::string(R"({"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":)") +
                  resource + "}")) == "Policy has invalid resource");
    // Conditions: unknown operators and keys, multivalued operators, bad values.
    const auto with_condition = [&](std::string_view c) {
        return refusal(statement(std::string(R"({"Effect":"Allow",)") + ok_rest + R"(,"Condition":)" +
                                 std::string(c) + "}"));
    };
    CHECK(with_condition(R"({"StringSortOf":{"s3:prefix":"a"}})") == "Invalid Condition type : StringSortOf");
    CHECK(with_condition(R"({"ForAnyValue:StringEquals":{"s3:prefix":"a"}})")
              .starts_with("Invalid Condition type : ForAnyValue:StringEquals"));
    CHECK(with_condition(R"({"StringEquals":{"aws:PrincipalOrgID":"o-1"}})") ==
          "Policy has an invalid condition key: aws:PrincipalOrgID");
    CHECK(with_condition(R"({"StringEquals":{"s3:ExistingObjectTag/x":"1"}})") ==
          "Policy has an invalid condition key: s3:ExistingObjectTag/x");
    CHECK(with_condition(R"({"IpAddress":{"aws:SourceIp":"10.0.0.0/33"}})") ==
          "Invalid IP address or CIDR in condition: 10.0.0.0/33");
    CHECK(
        with_condition(R"({"IpAddress":{"aws:SourceIp":"example.com"}})").starts_with("Invalid IP address"));
    CHECK(
        with_condition(R"({"NumericLessThan":{"s3:max-keys":"ten"}})").starts_with("Invalid numeric value"));
    CHECK(with_condition(R"({"DateLessThan":{"aws:CurrentTime":"tomorrow"}})").starts_with("Invalid date"));
    CHECK(with_condition(R"({"Bool":{"aws:SecureTransport":"maybe"}})").starts_with("Invalid boolean"));
    CHECK(with_condition(R"({})").starts_with("Policy has an invalid condition"));
    // Over 20 KB.
    std::string big = statement(std::string(R"({"Sid":")") + std::string(21 * 1024, 'x') +
                                R"(","Effect":"Allow",)" + ok_rest + "}");
    CHECK(refusal(big) == "Policies must be no more than 20 KB");
}

TEST_CASE("evaluation: actions, resources and principals with wildcards; Deny beats Allow")
{
    auto p = parsed(statement(R"(
        {"Effect":"Allow","Principal":{"AWS":"bob"},"Action":["s3:Get*","s3:PutObject"],"Resource":"arn:aws:s3:::b/team/*"},
        {"Effect":"Allow","Principal":{"AWS":"bob"},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::b"},
        {"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::b/team/secret?.txt"})"));
    CHECK(eval(p, "s3:GetObject", "team/a.txt", "bob") == policy_effect::allow);
    // Actions ignore case.
    auto upper = parsed(statement(
        R"({"Effect":"Allow","Principal":{"AWS":"bob"},"Action":"S3:GETOBJECT","Resource":"arn:aws:s3:::b/*"})"));
    CHECK(eval(upper, "s3:GetObject", "team/a.txt", "bob") == policy_effect::allow);
    CHECK(eval(p, "s3:PutObject", "team/x/y", "bob") == policy_effect::allow);
    CHECK(eval(p, "s3:DeleteObject", "team/a.txt", "bob") == policy_effect::none);
    CHECK(eval(p, "s3:GetObject", "other/a.txt", "bob") == policy_effect::none);
    CHECK(eval(p, "s3:GetObject", "TEAM/a.txt", "bob") == policy_effect::none); // resources do not
    CHECK(eval(p, "s3:GetObject", "team/a.txt", "carol") == policy_effect::none);
    CHECK(eval(p, "s3:GetObject", "team/a.txt", "") == policy_effect::none);
    CHECK(eval(p, "s3:ListBucket", "", "bob") == policy_effect::allow);
    CHECK(eval(p, "s3:GetObject", "team/secret1.txt", "bob") == policy_effect::deny);
    CHECK(eval(p, "s3:GetObject", "team/secret1.txt", "alice") == policy_effect::deny);
    CHECK(eval(p, "s3:GetObject", "team/secret12.txt", "bob") == policy_effect::allow); // ? is one character
}

TEST_CASE("evaluation: NotAction and NotResource")
{
    auto p = parsed(statement(R"({"Effect":"Deny","Principal":"*","NotAction":"s3:GetObject",
                                  "NotResource":"arn:aws:s3:::b/public/*"})"));
    CHECK(eval(p, "s3:PutObject", "private/x", "bob") == policy_effect::deny);
    CHECK(eval(p, "s3:GetObject", "private/x", "bob") == policy_effect::none);
    CHECK(eval(p, "s3:PutObject", "public/x", "bob") == policy_effect::none);
    CHECK(eval(p, "s3:ListBucket", "", "bob") == policy_effect::deny);
}

TEST_CASE("evaluation: conditions")
{
    const std::string rest =
        R"("Principal":"*","Action":["s3:PutObject","s3:GetObject"],"Resource":"arn:aws:s3:::b/*")";
    SUBCASE("aws:SourceIp, IPv4 and IPv4-mapped IPv6")
    {
        auto p =
            parsed(statement(R"({"Effect":"Deny",)" + rest +
                             R"(,"Condition":{"NotIpAddress":{"aws:SourceIp":["127.0.0.0/8","::1"]}}})"));
        CHECK(eval(p, "s3:GetObject", "k", "bob", {{"aws:sourceip", "127.0.0.1"}}) == policy_effect::none);
        CHECK(eval(p, "s3:GetObject", "k", "bob", {{"aws:sourceip", "::ffff:127.0.0.9"}}) ==
              policy_effect::none);
        CHECK(eval(p, "s3:GetObject", "k", "bob", {{"aws:sourceip", "::1"}}) == policy_effect::none);
        CHECK(eval(p, "s3:GetObject", "k", "bob", {{"aws:sourceip", "10.1.2.3"}}) == policy_effect::deny);
        auto allow = parsed(statement(R"({"Effect":"Allow",)" + rest +
                                      R"(,"Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}})"));
        CHECK(eval(allow, "s3:GetObject", "k", "bob", {{"aws:sourceip", "10.9.9.9"}}) ==
              policy_effect::allow);
        CHECK(eval(allow, "s3:GetObject", "k", "bob", {{"aws:sourceip", "127.0.0.1"}}) ==
              policy_effect::none);
        CHECK(eval(allow, "s3:GetObject", "k", "bob", {}) == policy_effect::none);
    }
    SUBCASE("aws:SecureTransport")
    {
        auto p = parsed(statement(R"({"Effect":"Deny",)" + rest +
                                  R"(,"Condition":{"Bool":{"aws:SecureTransport":"false"}}})"));
        CHECK(eval(p, "s3:GetObject", "k", "bob", {{"aws:securetransport", "false"}}) == policy_effect::deny);
        CHECK(eval(p, "s3:GetObject", "k", "bob", {{"aws:securetransport", "true"}}) == policy_effect::none);
    }
    SUBCASE("s3:x-amz-server-side-encryption: a missing key satisfies the negated operators")
    {
        auto p = parsed(statement(
            R"({"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::b/*",
                "Condition":{"StringNotEquals":{"s3:x-amz-server-side-encryption":"AES256"}}})"));
        CHECK(eval(p, "s3:PutObject", "k", "bob", {}) == policy_effect::deny);
        CHECK(eval(p, "s3:PutObject", "k", "bob", {{"s3:x-amz-server-side-encryption", "aws:kms"}}) ==
              policy_effect::deny);
        CHECK(eval(p, "s3:PutObject", "k", "bob", {{"s3:x-amz-server-side-encryption", "AES256"}}) ==
              policy_effect::none);
        auto if_exists = parsed(statement(
            R"({"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::b/*",
                "Condition":{"StringEqualsIfExists":{"s3:x-amz-server-side-encryption":"aws:kms"}}})"));
        CHECK(eval(if_exists, "s3:PutObject", "k", "bob", {}) == policy_effect::deny);
        auto null = parsed(statement(
            R"({"Effect":"Deny","Principal":"*","Action":"s3:PutObject","Resource":"arn:aws:s3:::b/*",
                "Condition":{"Null":{"s3:x-amz-server-side-encryption":"true"}}})"));
        CHECK(eval(null, "s3:PutObject", "k", "bob", {}) == policy_effect::deny);
        CHECK(eval(null, "s3:PutObject", "k", "bob", {{"s3:x-amz-server-side-encryption", "AES256"}}) ==
              policy_effect::none);
    }
    SUBCASE("s3:prefix with StringLike; several keys all hold, several values any")
    {
        auto p = parsed(statement(
            R"({"Effect":"Allow","Principal":{"AWS":"bob"},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::b",
                "Condition":{"StringLike":{"s3:prefix":["home/bob/*","shared/*"]},
                             "NumericLessThanEquals":{"s3:max-keys":"100"}}})"));
        CHECK(eval(p, "s3:ListBucket", "", "bob", {{"s3:prefix", "home/bob/x"}, {"s3:max-keys", "10"}}) ==
              policy_effect::allow);
        CHECK(eval(p, "s3:ListBucket", "", "bob", {{"s3:prefix", "shared/"}, {"s3:max-keys", "100"}}) ==
              policy_effect::allow);
        CHECK(eval(p, "s3:ListBucket", "", "bob", {{"s3:prefix", "home/carol/"}, {"s3:max-keys", "10"}}) ==
              policy_effect::none);
        CHECK(eval(p, "s3:ListBucket", "", "bob", {{"s3:prefix", "home/bob/"}, {"s3:max-keys", "1000"}}) ==
              policy_effect::none);
        CHECK(eval(p, "s3:ListBucket", "", "bob", {{"s3:prefix", "home/bob/"}}) == policy_effect::none);
    }
    SUBCASE("dates and string case")
    {
        auto p = parsed(statement(R"({"Effect":"Allow",)" + rest +
                                  R"(,"Condition":{"DateLessThan":{"aws:CurrentTime":"2030-01-01T00:00:00Z"},
                                       "StringEqualsIgnoreCase":{"aws:username":"BOB"}}})"));
        CHECK(eval(p, "s3:GetObject", "k", "bob",
                   {{"aws:currenttime", "1700000000"}, {"aws:username", "bob"}}) == policy_effect::allow);
        CHECK(eval(p, "s3:GetObject", "k", "bob",
                   {{"aws:currenttime", "1900000000"}, {"aws:username", "bob"}}) == policy_effect::none);
    }
}

TEST_CASE("IsPublic: Allow to everyone without a narrowing condition")
{
    const std::string rest = R"("Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*")";
    CHECK(is_public(parsed(statement(R"({"Effect":"Allow","Principal":"*",)" + rest + "}"))));
    CHECK(is_public(parsed(statement(R"({"Effect":"Allow","Principal":{"AWS":["bob","*"]},)" + rest + "}"))));
    CHECK_FALSE(is_public(parsed(statement(R"({"Effect":"Allow","Principal":{"AWS":"bob"},)" + rest + "}"))));
    CHECK_FALSE(is_public(parsed(statement(R"({"Effect":"Deny","Principal":"*",)" + rest + "}"))));
    CHECK_FALSE(is_public(parsed(statement(R"({"Effect":"Allow","Principal":"*",)" + rest +
                                           R"(,"Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}})"))));
    // Conditions that do not narrow who: the whole Internet, a negated range, the transport.
    CHECK(is_public(parsed(statement(R"({"Effect":"Allow","Principal":"*",)" + rest +
                                     R"(,"Condition":{"IpAddress":{"aws:SourceIp":"0.0.0.0/0"}}})"))));
    CHECK(is_public(parsed(statement(R"({"Effect":"Allow","Principal":"*",)" + rest +
                                     R"(,"Condition":{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}}})"))));
    CHECK(is_public(parsed(statement(R"({"Effect":"Allow","Principal":"*",)" + rest +
                                     R"(,"Condition":{"Bool":{"aws:SecureTransport":"true"}}})"))));
}

TEST_CASE("IsPublic: address conditions that admit more than a narrow set are public in effect")
{
    const std::string rest = R"("Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*")";
    const auto from = [&](std::string_view sources) {
        return std::string(R"({"Effect":"Allow","Principal":"*",)") + rest +
               R"(,"Condition":{"IpAddress":{"aws:SourceIp":)" + std::string(sources) + "}}}";
    };
    const auto public_policy = [&](std::string_view statements) {
        return is_public(parsed(statement(statements)));
    };
    // The limits themselves are narrow: one IPv4 /8, one IPv6 /32 (and unions that add up to no more).
    CHECK_FALSE(public_policy(from(R"("10.0.0.0/8")")));
    CHECK_FALSE(public_policy(from(R"(["10.0.0.0/9","10.128.0.0/9"])")));
    CHECK_FALSE(public_policy(from(R"(["0.0.0.0/9","128.0.0.0/9"])")));
    CHECK_FALSE(public_policy(from(R"("2001:db8::/32")")));
    CHECK_FALSE(public_policy(from(R"(["10.0.0.0/8","2001:db8::/32"])")));
    CHECK_FALSE(public_policy(from(R"("::ffff:10.0.0.0/104")"))); // 10.0.0.0/8 written as IPv6
    CHECK_FALSE(public_policy(from(R"(["192.0.2.1","192.0.2.1/32","198.51.100.0/24"])")));
    // One address more than a /8, or an IPv6 /31: public.
    CHECK(public_policy(from(R"(["10.0.0.0/8","11.0.0.0/32"])")));
    CHECK(public_policy(from(R"("2001:db8::/31")")));
    CHECK(public_policy(from(R"("10.0.0.0/7")")));
    // The attacks: ::/1 holds every IPv4-mapped address; two halves of IPv4; two halves of everything.
    CHECK(public_policy(from(R"("::/1")")));
    CHECK(public_policy(from(R"(["0.0.0.0/1","128.0.0.0/1"])")));
    CHECK(public_policy(from(R"(["::/1","8000::/1"])")));
    CHECK(public_policy(from(R"("::/0")")));
    CHECK(public_policy(from(R"("::ffff:0.0.0.0/96")")));
    // NAT64: behind a gateway the whole IPv4 Internet arrives from 64:ff9b::/96 (or a local-use /96 of
    // 64:ff9b:1::/48); a /104 of it is one IPv4 /8, narrow.
    CHECK(public_policy(from(R"("64:ff9b::/96")")));
    CHECK(public_policy(from(R"("64:ff9b:1::/48")")));
    CHECK(public_policy(from(R"("64:ff9b:1:2::/96")")));
    CHECK_FALSE(public_policy(from(R"("64:ff9b::a00:0/104")")));
    CHECK(public_policy(from(R"(["64:ff9b::a00:0/104","10.0.0.0/8"])"))); // two /8s of IPv4 together
    // A union over statements: each narrow, together the whole of IPv4.
    CHECK(public_policy(from(R"("0.0.0.0/1")") + "," + from(R"("128.0.0.0/1")")));
    {
        // Sixteen statements of a /12 each: all of 10.0.0.0/8, narrow; one more /12 elsewhere, public (each).
        std::string many;
        for (int i = 0; i < 16; ++i)
            many += (i ? "," : "") + from("\"10." + std::to_string(i * 16) + ".0.0/12\"");
        CHECK_FALSE(public_policy(many));
        many += "," + from(R"("11.0.0.0/12")");
        CHECK(public_policy(many));
        auto p = parsed(statement(many));
        CHECK(std::all_of(p.statements.begin(), p.statements.end(),
                          [](const policy_statement& s) { return s.public_in_effect; }));
    }
    CHECK_FALSE(public_policy(from(R"("10.0.0.0/9")") + "," + from(R"("10.128.0.0/9")")));
    // Several address conditions must all hold: the narrowest one bounds the statement.
    CHECK_FALSE(public_policy(std::string(R"({"Effect":"Allow","Principal":"*",)") + rest +
                              R"(,"Condition":{"IpAddressIfExists":{"aws:SourceIp":"::/0"},)"
                              R"("IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}})"));
    // ...IfExists does not narrow (a missing key passes it); a fixed user id narrows whatever the address.
    CHECK(public_policy(std::string(R"({"Effect":"Allow","Principal":"*",)") + rest +
                        R"(,"Condition":{"IpAddressIfExists":{"aws:SourceIp":"10.0.0.0/8"}}})"));
    CHECK_FALSE(public_policy(std::string(R"({"Effect":"Allow","Principal":"*",)") + rest +
                              R"(,"Condition":{"IpAddress":{"aws:SourceIp":"::/1"},)"
                              R"("StringEquals":{"aws:userid":"bob"}}})"));
}

TEST_CASE("A policy public in effect: its statements are void where public statements are")
{
    const auto p = parsed(statement(R"({"Effect":"Allow","Principal":"*","Action":"s3:GetObject",)"
                                    R"("Resource":"arn:aws:s3:::b/*",)"
                                    R"("Condition":{"IpAddress":{"aws:SourceIp":"::/1"}}})"));
    const context_list from_loopback = {{"aws:sourceip", "127.0.0.1"}};
    policy_request r{.action = "s3:GetObject",
                     .bucket = "b",
                     .key = "k",
                     .object_action = true,
                     .user_id = "",
                     .context = from_loopback,
                     .ignore_public = false};
    CHECK(evaluate(p, r) == policy_effect::allow); // ::/1 does admit 127.0.0.1 (as ::ffff:127.0.0.1)
    r.ignore_public = true;
    CHECK(evaluate(p, r) == policy_effect::none);
    CHECK_FALSE(may_allow(p, r));
}

namespace {

principal policy_user(std::string_view id, std::string_view scope = "")
{
    return make_principal(std::string(id), false, scope);
}

struct policy_case
{
    bucket_policy policy;
    context_list context;
    bucket_resource resource(std::string_view action, std::string_view key, bool object_action)
    {
        return bucket_resource{.name = "b",
                               .owner_id = "alice",
                               .object = object_action && !key.empty(),
                               .policy = &policy,
                               .request = policy_request{.action = action,
                                                         .bucket = "b",
                                                         .key = key,
                                                         .object_action = object_action,
                                                         .context = context}};
    }
};

} // namespace

TEST_CASE("authorize: a policy's Allow grants like an ACL grant, within Depot's rules")
{
    policy_case c{parsed(statement(R"(
        {"Effect":"Allow","Principal":{"AWS":"bob"},"Action":["s3:GetObject","s3:PutObject"],"Resource":"arn:aws:s3:::b/in/*"},
        {"Effect":"Allow","Principal":{"AWS":"bob"},"Action":"s3:*","Resource":"arn:aws:s3:::b"},
        {"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/pub/*"})")),
                  {}};
    CHECK(authorize(policy_user("bob"), permission::read_object, c.resource("s3:GetObject", "in/x", true)));
    CHECK(authorize(policy_user("bob"), permission::write_object, c.resource("s3:PutObject", "in/x", true)));
    CHECK_FALSE(
        authorize(policy_user("bob"), permission::write_object, c.resource("s3:PutObject", "out/x", true)));
    CHECK_FALSE(
        authorize(policy_user("carol"), permission::read_object, c.resource("s3:GetObject", "in/x", true)));
    // Anonymous callers read what a public statement allows, and never write.
    CHECK(authorize(principal{}, permission::read_object, c.resource("s3:GetObject", "pub/x", true)));
    CHECK_FALSE(authorize(principal{}, permission::read_object, c.resource("s3:GetObject", "in/x", true)));
    // s3:* does not reach the policy's own management, nor the sensitive actions (they must be named).
    for (auto action : {"s3:PutBucketPolicy", "s3:GetBucketPolicy", "s3:DeleteBucketPolicy"})
        CHECK_FALSE(
            authorize(policy_user("bob"), permission::configure_bucket, c.resource(action, "", false)));
    CHECK_FALSE(
        authorize(policy_user("bob"), permission::delete_bucket, c.resource("s3:DeleteBucket", "", false)));
    CHECK_FALSE(authorize(policy_user("bob"), permission::configure_bucket,
                          c.resource("s3:PutBucketPublicAccessBlock", "", false)));
    CHECK(authorize(policy_user("bob"), permission::configure_bucket,
                    c.resource("s3:PutBucketTagging", "", false)));
    CHECK(authorize(policy_user("bob"), permission::list_objects, c.resource("s3:ListBucket", "", false)));

    SUBCASE("public statements are void when public policies are restricted")
    {
        auto r = c.resource("s3:GetObject", "pub/x", true);
        r.ignore_public_policy = true;
        CHECK_FALSE(authorize(principal{}, permission::read_object, r));
        CHECK_FALSE(authorize(policy_user("carol"), permission::read_object, r));
        auto named = c.resource("s3:GetObject", "in/x", true);
        named.ignore_public_policy = true;
        CHECK(authorize(policy_user("bob"), permission::read_object, named));
    }
    SUBCASE("a bucket in which models live: team roles govern, Allows are void")
    {
        auto r = c.resource("s3:GetObject", "in/x", true);
        r.has_models = true;
        CHECK_FALSE(authorize(policy_user("bob"), permission::read_object, r));
        CHECK(authorize(policy_user("alice"), permission::read_object, r));
    }
    SUBCASE("DeleteBucket is granted only when named without a wildcard")
    {
        policy_case named{
            parsed(statement(
                R"({"Effect":"Allow","Principal":{"AWS":"bob"},"Action":"s3:DeleteBucket","Resource":"arn:aws:s3:::b"})")),
            {}};
        CHECK(authorize(policy_user("bob"), permission::delete_bucket,
                        named.resource("s3:DeleteBucket", "", false)));
    }
}

TEST_CASE("authorize: the policy's Deny applies to the owner and admins, except for the policy itself")
{
    policy_case c{parsed(statement(R"(
        {"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"]})")),
                  {}};
    const auto alice = policy_user("alice");
    const auto root = make_principal("root", true, "");
    CHECK_FALSE(authorize(alice, permission::read_object, c.resource("s3:GetObject", "k", true)));
    CHECK_FALSE(authorize(root, permission::write_object, c.resource("s3:PutObject", "k", true)));
    CHECK_FALSE(authorize(alice, permission::delete_bucket, c.resource("s3:DeleteBucket", "", false)));
    for (auto action : {"s3:PutBucketPolicy", "s3:GetBucketPolicy", "s3:DeleteBucketPolicy"}) {
        CHECK(authorize(alice, permission::configure_bucket, c.resource(action, "", false)));
        CHECK(authorize(root, permission::configure_bucket, c.resource(action, "", false)));
        CHECK_FALSE(
            authorize(policy_user("bob"), permission::configure_bucket, c.resource(action, "", false)));
    }
    // An ACL grant does not beat a Deny either.
    auto r = c.resource("s3:GetObject", "k", true);
    r.acls_disabled = false;
    r.bucket_grants = acl_grants{.all_users = acl_right::read};
    r.object_grants = acl_grants{.user = acl_right::read};
    CHECK_FALSE(authorize(policy_user("bob"), permission::read_object, r));
    // Without an action the policy is not asked (a copy's source: owner only, as before).
    CHECK(authorize(alice, permission::read_object, c.resource("", "", false)));
}

TEST_CASE("globs")
{
    CHECK(policy_glob("*", ""));
    CHECK(policy_glob("a*b*c", "aXXbYYc"));
    CHECK_FALSE(policy_glob("a*b*c", "aXXbYY"));
    CHECK(policy_glob("a?c", "abc"));
    CHECK_FALSE(policy_glob("a?c", "ac"));
    CHECK(policy_glob("S3:GET*", "s3:getobject", true));
    CHECK_FALSE(policy_glob("S3:GET*", "s3:getobject"));
}

TEST_CASE("authorize: DeleteObjects as a whole goes on when a statement may allow some key; each key decides")
{
    policy_case c{parsed(statement(R"(
        {"Effect":"Allow","Principal":{"AWS":"bob"},"Action":"s3:DeleteObject","Resource":"arn:aws:s3:::b/tmp/*"},
        {"Effect":"Deny","Principal":"*","Action":"s3:DeleteObject","Resource":"arn:aws:s3:::b/tmp/keep"})")),
                  {}};
    CHECK(
        authorize(policy_user("bob"), permission::delete_objects, c.resource("s3:DeleteObject", "", false)));
    CHECK_FALSE(authorize(policy_user("carol"), permission::delete_objects,
                          c.resource("s3:DeleteObject", "", false)));
    CHECK(authorize(policy_user("bob"), permission::delete_objects,
                    c.resource("s3:DeleteObject", "tmp/x", true)));
    CHECK_FALSE(authorize(policy_user("bob"), permission::delete_objects,
                          c.resource("s3:DeleteObject", "other", true)));
    CHECK_FALSE(authorize(policy_user("bob"), permission::delete_objects,
                          c.resource("s3:DeleteObject", "tmp/keep", true)));
    CHECK_FALSE(authorize(policy_user("alice"), permission::delete_objects,
                          c.resource("s3:DeleteObject", "tmp/keep", true)));
    CHECK(authorize(policy_user("alice"), permission::delete_objects,
                    c.resource("s3:DeleteObject", "other", true)));
}

TEST_CASE("authorize: bypassing GOVERNANCE retention needs the owner, an admin or a policy naming it exactly")
{
    const auto with_bypass = [](bucket_resource r) {
        r.bypass_governance = true;
        return r;
    };
    const auto alice = policy_user("alice"); // the bucket's owner
    const auto root = make_principal("root", true, "");
    SUBCASE("an ACL grant never allows the bypass")
    {
        bucket_resource r{.name = "b", .owner_id = "alice", .object = true};
        r.bucket_grants = acl_grants{.user = acl_right::write, .authenticated_users = acl_right::write};
        CHECK(authorize(policy_user("bob"), permission::write_object, r));
        CHECK_FALSE(authorize(policy_user("bob"), permission::write_object, with_bypass(r)));
        r.object = false;
        CHECK(authorize(policy_user("bob"), permission::delete_objects, r));
        CHECK_FALSE(authorize(policy_user("bob"), permission::delete_objects, with_bypass(r)));
        CHECK(authorize(alice, permission::write_object, with_bypass(r)));
        CHECK(authorize(root, permission::delete_objects, with_bypass(r)));
        CHECK_FALSE(authorize(principal{}, permission::write_object, with_bypass(r)));
    }
    SUBCASE("the actions a bypass goes with, or s3:*, do not allow it")
    {
        policy_case c{parsed(statement(R"(
            {"Effect":"Allow","Principal":{"AWS":"bob"},"Action":["s3:DeleteObjectVersion","s3:DeleteObject","s3:PutObjectRetention"],"Resource":"arn:aws:s3:::b/*"},
            {"Effect":"Allow","Principal":{"AWS":"carol"},"Action":"s3:*","Resource":"arn:aws:s3:::b/*"},
            {"Effect":"Allow","Principal":{"AWS":"dave"},"Action":"s3:Bypass*","Resource":"arn:aws:s3:::b/*"})")),
                      {}};
        CHECK(authorize(policy_user("bob"), permission::write_object,
                        c.resource("s3:DeleteObjectVersion", "k", true)));
        CHECK_FALSE(authorize(policy_user("bob"), permission::write_object,
                              with_bypass(c.resource("s3:DeleteObjectVersion", "k", true))));
        CHECK(authorize(policy_user("bob"), permission::write_object_lock,
                        c.resource("s3:PutObjectRetention", "k", true)));
        CHECK_FALSE(authorize(policy_user("bob"), permission::write_object_lock,
                              with_bypass(c.resource("s3:PutObjectRetention", "k", true))));
        CHECK(authorize(policy_user("bob"), permission::delete_objects,
                        c.resource("s3:DeleteObject", "", false)));
        CHECK_FALSE(authorize(policy_user("bob"), permission::delete_objects,
                              with_bypass(c.resource("s3:DeleteObject", "", false))));
        CHECK_FALSE(authorize(policy_user("bob"), permission::delete_objects,
                              with_bypass(c.resource("s3:DeleteObjectVersion", "k", true))));
        for (auto who : {"carol", "dave"})
            CHECK_FALSE(authorize(policy_user(who), permission::write_object,
                                  with_bypass(c.resource("s3:DeleteObjectVersion", "k", true))));
        // The owner needs no statement.
        CHECK(authorize(alice, permission::write_object,
                        with_bypass(c.resource("s3:DeleteObjectVersion", "k", true))));
    }
    SUBCASE("a statement naming s3:BypassGovernanceRetention allows it where its resource and conditions do")
    {
        policy_case c{parsed(statement(R"(
            {"Effect":"Allow","Principal":{"AWS":"bob"},"Action":["s3:DeleteObjectVersion","s3:BypassGovernanceRetention"],"Resource":"arn:aws:s3:::b/tmp/*"})")),
                      {}};
        CHECK(authorize(policy_user("bob"), permission::write_object,
                        with_bypass(c.resource("s3:DeleteObjectVersion", "tmp/x", true))));
        CHECK_FALSE(authorize(policy_user("bob"), permission::write_object,
                              with_bypass(c.resource("s3:DeleteObjectVersion", "keep/x", true))));
        CHECK_FALSE(authorize(policy_user("carol"), permission::write_object,
                              with_bypass(c.resource("s3:DeleteObjectVersion", "tmp/x", true))));
        // DeleteObjects as a whole goes on; each key decides.
        CHECK(authorize(policy_user("bob"), permission::delete_objects,
                        with_bypass(c.resource("s3:DeleteObjectVersion", "", false))));
        // Void in a bucket in which models live (team roles govern it).
        auto models = with_bypass(c.resource("s3:DeleteObjectVersion", "tmp/x", true));
        models.has_models = true;
        CHECK_FALSE(authorize(policy_user("bob"), permission::write_object, models));
    }
    SUBCASE("a Deny of s3:BypassGovernanceRetention binds the owner and installation admins")
    {
        policy_case c{parsed(statement(R"(
            {"Effect":"Deny","Principal":"*","Action":"s3:BypassGovernanceRetention","Resource":"arn:aws:s3:::b/*"})")),
                      {}};
        for (const auto& who : {alice, root}) {
            CHECK(authorize(who, permission::write_object, c.resource("s3:DeleteObjectVersion", "k", true)));
            CHECK_FALSE(authorize(who, permission::write_object,
                                  with_bypass(c.resource("s3:DeleteObjectVersion", "k", true))));
            CHECK_FALSE(authorize(who, permission::write_object_lock,
                                  with_bypass(c.resource("s3:PutObjectRetention", "k", true))));
        }
    }
}

TEST_CASE("authorize: a snapshot view is its owner's, and the policy's Deny of the key it serves binds")
{
    // The server resolves .snapshots/s1/secret/x to the key it serves (secret/x) and marks the view
    // owner-only.
    policy_case c{parsed(statement(R"(
        {"Effect":"Allow","Principal":{"AWS":"bob"},"Action":"s3:*","Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"]},
        {"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/pub/*"},
        {"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/secret/*"})")),
                  {}};
    auto view = [&](std::string_view action, std::string_view key, bool object_action) {
        auto r = c.resource(action, key, object_action);
        r.owner_only = true;
        return r;
    };
    // Live keys: bob's Allow, the public statement and the Deny, as always.
    CHECK(authorize(policy_user("bob"), permission::read_object,
                    c.resource("s3:GetObject", "private/x", true)));
    CHECK(authorize(principal{}, permission::read_object, c.resource("s3:GetObject", "pub/x", true)));
    CHECK_FALSE(authorize(policy_user("alice"), permission::read_object,
                          c.resource("s3:GetObject", "secret/x", true)));
    // The view: no Allow and no grant reaches it, the owner reads it, the Deny of the key holds for her too.
    CHECK_FALSE(
        authorize(policy_user("bob"), permission::read_object, view("s3:GetObject", "private/x", true)));
    CHECK_FALSE(authorize(policy_user("bob"), permission::list_objects, view("s3:ListBucket", "", false)));
    CHECK_FALSE(authorize(principal{}, permission::read_object, view("s3:GetObject", "pub/x", true)));
    CHECK(authorize(policy_user("alice"), permission::read_object, view("s3:GetObject", "private/x", true)));
    CHECK(authorize(policy_user("alice"), permission::list_objects, view("s3:ListBucket", "", false)));
    auto denied =
        authorize(policy_user("alice"), permission::read_object, view("s3:GetObject", "secret/x", true));
    REQUIRE_FALSE(denied);
    CHECK(denied.error().message.find("policy denies") != std::string::npos);
    // ACL grants do not reach it either.
    auto granted = view("s3:GetObject", "private/x", true);
    granted.bucket_grants = acl_grants{.user = acl_right::read};
    granted.object_grants = acl_grants{.user = acl_right::read};
    CHECK_FALSE(authorize(policy_user("bob"), permission::read_object, granted));
    CHECK(authorize(make_principal("root", true, ""), permission::read_object, granted));
}
