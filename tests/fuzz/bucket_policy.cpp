/// \file
/// Fuzzes the bucket policy language (src/auth/bucket_policy.cpp): PutBucketPolicy's parser and validation,
/// the public-policy rule and the evaluator with its condition operators.
///
/// Input: a policy document, then optionally a NUL byte and request bytes: the first picks an action of
/// known_s3_actions(), the second the principal (anonymous, "alice" or "bob") and a source address, the
/// rest is the object key, the s3:prefix value and a user-supplied condition value (split at the next NUL
/// bytes). Invariants, for every accepted policy:
/// - parsing is deterministic, refusals are malformed_policy, and the document names only its bucket;
/// - evaluation is deterministic and a request both allowed and denied is impossible;
/// - voiding public statements (ignore_public) only ever takes Allows away, and changes nothing when the
///   policy is not public (is_public is the set of statements ignore_public voids);
/// - exact_allow_only only ever takes Allows away; a Deny is the same with or without either flag;
/// - may_allow holds whenever evaluate allows (DeleteObjects relies on it to skip the per-key pass).

#include "auth/bucket_policy.hpp"

#include "check.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using namespace depot;
using namespace depot::auth;

std::string_view take_until_nul(std::string_view& in)
{
    auto nul = in.find('\0');
    auto out = in.substr(0, nul);
    in = nul == std::string_view::npos ? std::string_view() : in.substr(nul + 1);
    return out;
}

constexpr std::array<std::string_view, 8> addresses = {"127.0.0.1",   "10.1.2.3", "192.168.7.9",  "8.8.8.8",
                                                       "203.0.113.5", "::1",      "2001:db8::17", "fe80::1"};

void check_request(const bucket_policy& p, const policy_request& base)
{
    policy_request plain = base;
    plain.ignore_public = false;
    plain.exact_allow_only = false;
    const auto effect = evaluate(p, plain);
    FUZZ_CHECK(evaluate(p, plain) == effect);

    policy_request voided = plain;
    voided.ignore_public = true;
    const auto without_public = evaluate(p, voided);
    if (effect == policy_effect::deny)
        FUZZ_CHECK(without_public == policy_effect::deny);
    if (without_public == policy_effect::allow)
        FUZZ_CHECK(effect == policy_effect::allow);
    if (!is_public(p))
        FUZZ_CHECK(without_public == effect);

    policy_request exact = plain;
    exact.exact_allow_only = true;
    const auto exact_effect = evaluate(p, exact);
    if (effect == policy_effect::deny)
        FUZZ_CHECK(exact_effect == policy_effect::deny);
    if (exact_effect == policy_effect::allow)
        FUZZ_CHECK(effect == policy_effect::allow);
    if (exact_effect == policy_effect::deny)
        FUZZ_CHECK(effect == policy_effect::deny);

    if (effect == policy_effect::allow)
        FUZZ_CHECK(may_allow(p, plain));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::string_view in(reinterpret_cast<const char*>(data), size);
    const std::string_view document = take_until_nul(in);
    constexpr std::string_view bucket = "fuzz-bucket";

    auto parsed = parse_bucket_policy(document, bucket);
    auto again = parse_bucket_policy(document, bucket);
    FUZZ_CHECK(parsed.has_value() == again.has_value());
    if (!parsed) {
        FUZZ_CHECK(parsed.error().code == errc::malformed_policy);
        return 0;
    }
    const bucket_policy& p = *parsed;
    FUZZ_CHECK(is_public(p) == is_public(*again));
    for (const auto& s : p.statements) {
        FUZZ_CHECK(!s.actions.empty());
        // Only the policy's own bucket can be named (NotResource patterns aside, which match by exclusion).
        if (!s.not_resource)
            for (const auto& r : s.resources)
                FUZZ_CHECK(r.substr(0, r.find('/')) == bucket ||
                           policy_glob(r.substr(0, r.find('/')), bucket));
    }
    (void)named_users(p);

    const auto known = known_s3_actions();
    const std::uint8_t pick = in.empty() ? 0 : static_cast<std::uint8_t>(in[0]);
    const std::uint8_t who = in.size() < 2 ? 0 : static_cast<std::uint8_t>(in[1]);
    in.remove_prefix(std::min<std::size_t>(in.size(), 2));
    const std::string_view key = take_until_nul(in);
    const std::string prefix(take_until_nul(in));
    const std::string extra(take_until_nul(in));

    const known_action& action = known[pick % known.size()];
    constexpr std::array<std::string_view, 3> users = {"", "alice", "bob"};
    const std::string source(addresses[(who >> 2) % addresses.size()]);
    std::vector<std::pair<std::string_view, std::string>> context = {
        {"aws:sourceip", source},
        {"aws:securetransport", (who & 0x20) ? "true" : "false"},
        {"aws:currenttime", "2026-12-01T12:00:00Z"},
        {"aws:epochtime", "1796126400"},
    };
    if (!prefix.empty())
        context.emplace_back("s3:prefix", prefix);
    if (!extra.empty())
        context.emplace_back("s3:x-amz-server-side-encryption", extra);
    if (!users[who % users.size()].empty()) {
        context.emplace_back("aws:username", std::string(users[who % users.size()]));
        context.emplace_back("aws:userid", std::string(users[who % users.size()]));
    }

    policy_request r;
    r.action = action.name;
    r.bucket = bucket;
    r.key = key;
    r.object_action = action.object;
    r.user_id = users[who % users.size()];
    r.context = context;
    check_request(p, r);
    // The same request for every address: the verdicts must each be consistent.
    for (auto a : addresses) {
        context[0].second = std::string(a);
        check_request(p, r);
    }
    return 0;
}
