// The bucket policy language (auth/bucket_policy.hpp): parser, validation and evaluator. Over 700 lines on
// purpose: the grammar, the action table, the condition operators and the evaluation are one unit whose
// pieces only make sense together, and each is short; splitting them would spread the subset Depot accepts
// over files.
#include "auth/bucket_policy.hpp"

#include "common/json.hpp"

#include <algorithm>
#include <array>
#include <boost/asio/ip/address.hpp>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>

namespace depot::auth {
namespace {

namespace json = boost::json;

constexpr std::array<known_action, 58> actions = {{
    {"s3:GetObject", true},
    {"s3:GetObjectVersion", true},
    {"s3:PutObject", true},
    {"s3:DeleteObject", true},
    {"s3:DeleteObjectVersion", true},
    {"s3:GetObjectAcl", true},
    {"s3:GetObjectVersionAcl", true},
    {"s3:PutObjectAcl", true},
    {"s3:PutObjectVersionAcl", true},
    {"s3:GetObjectTagging", true},
    {"s3:GetObjectVersionTagging", true},
    {"s3:PutObjectTagging", true},
    {"s3:PutObjectVersionTagging", true},
    {"s3:DeleteObjectTagging", true},
    {"s3:DeleteObjectVersionTagging", true},
    {"s3:GetObjectAttributes", true},
    {"s3:GetObjectVersionAttributes", true},
    {"s3:AbortMultipartUpload", true},
    {"s3:ListMultipartUploadParts", true},
    {"s3:GetObjectRetention", true},
    {"s3:PutObjectRetention", true},
    {"s3:GetObjectLegalHold", true},
    {"s3:PutObjectLegalHold", true},
    {"s3:BypassGovernanceRetention", true},
    {"s3:RestoreObject", true},
    {"s3:GetObjectTorrent", true},
    {"s3:GetObjectVersionTorrent", true},
    {"s3:ListBucket", false},
    {"s3:ListBucketVersions", false},
    {"s3:ListBucketMultipartUploads", false},
    {"s3:GetBucketLocation", false},
    {"s3:GetBucketVersioning", false},
    {"s3:PutBucketVersioning", false},
    {"s3:GetBucketAcl", false},
    {"s3:PutBucketAcl", false},
    {"s3:GetBucketCORS", false},
    {"s3:PutBucketCORS", false},
    {"s3:GetBucketTagging", false},
    {"s3:PutBucketTagging", false},
    {"s3:GetLifecycleConfiguration", false},
    {"s3:PutLifecycleConfiguration", false},
    {"s3:GetBucketObjectLockConfiguration", false},
    {"s3:PutBucketObjectLockConfiguration", false},
    {"s3:GetEncryptionConfiguration", false},
    {"s3:PutEncryptionConfiguration", false},
    {"s3:GetBucketPolicy", false},
    {"s3:PutBucketPolicy", false},
    {"s3:DeleteBucketPolicy", false},
    {"s3:GetBucketPolicyStatus", false},
    {"s3:GetBucketPublicAccessBlock", false},
    {"s3:PutBucketPublicAccessBlock", false},
    {"s3:GetBucketOwnershipControls", false},
    {"s3:PutBucketOwnershipControls", false},
    {"s3:DeleteBucket", false},
    {"s3:GetBucketWebsite", false},
    {"s3:GetBucketLogging", false},
    {"s3:GetBucketNotification", false},
    {"s3:PutBucketNotification", false}, // REST: a bucket's object_events (PATCH /api/v1/buckets/{bucket})
}};

constexpr std::array<std::string_view, 13> condition_keys = {
    "aws:sourceip",
    "aws:securetransport",
    "aws:username",
    "aws:userid",
    "aws:currenttime",
    "aws:epochtime",
    "s3:prefix",
    "s3:delimiter",
    "s3:max-keys",
    "s3:x-amz-server-side-encryption",
    "s3:x-amz-server-side-encryption-customer-algorithm",
    "s3:x-amz-acl",
    "s3:versionid"};

constexpr std::array<std::string_view, 21> operators = {"StringEquals",
                                                        "StringNotEquals",
                                                        "StringEqualsIgnoreCase",
                                                        "StringNotEqualsIgnoreCase",
                                                        "StringLike",
                                                        "StringNotLike",
                                                        "NumericEquals",
                                                        "NumericNotEquals",
                                                        "NumericLessThan",
                                                        "NumericLessThanEquals",
                                                        "NumericGreaterThan",
                                                        "NumericGreaterThanEquals",
                                                        "DateEquals",
                                                        "DateNotEquals",
                                                        "DateLessThan",
                                                        "DateLessThanEquals",
                                                        "DateGreaterThan",
                                                        "DateGreaterThanEquals",
                                                        "Bool",
                                                        "IpAddress",
                                                        "NotIpAddress"};

constexpr std::string_view arn_prefix = "arn:aws:s3:::";

error malformed(std::string message)
{
    return make_error(errc::malformed_policy, std::move(message));
}

std::string lower(std::string_view s)
{
    std::string out(s);
    for (auto& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool has_wildcard(std::string_view s)
{
    return s.find_first_of("*?") != std::string_view::npos;
}

/// A string or an array of strings; nullopt otherwise (or when empty).
std::optional<std::vector<std::string>> strings_of(const json::value& v)
{
    std::vector<std::string> out;
    if (v.is_string()) {
        out.emplace_back(v.get_string());
        return out;
    }
    if (!v.is_array() || v.get_array().empty())
        return std::nullopt;
    for (const auto& e : v.get_array()) {
        if (!e.is_string())
            return std::nullopt;
        out.emplace_back(e.get_string());
    }
    return out;
}

/// A JSON number as a policy writes it: integers as digits, other numbers in their shortest form.
std::string number_text(const json::value& e)
{
    if (e.is_int64())
        return std::to_string(e.get_int64());
    if (e.is_uint64())
        return std::to_string(e.get_uint64());
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, e.get_double());
    return ec == std::errc{} ? std::string(buf, end) : std::string();
}

/// The text of a string value, or the JSON of any other ("" for none).
std::string text_of(const json::value& v)
{
    return v.is_string() ? std::string(v.get_string()) : json::serialize(v);
}

bool is_string(const json::value& v, std::string_view s)
{
    return v.is_string() && v.get_string() == s;
}

/// Condition values: strings, numbers and booleans, alone or in an array.
std::optional<std::vector<std::string>> condition_values(const json::value& v)
{
    const auto one = [](const json::value& e) -> std::optional<std::string> {
        if (e.is_string())
            return std::string(e.get_string());
        if (e.is_bool())
            return std::string(e.get_bool() ? "true" : "false");
        if (e.is_number())
            return number_text(e);
        return std::nullopt;
    };
    std::vector<std::string> out;
    if (v.is_array()) {
        if (v.get_array().empty())
            return std::nullopt;
        for (const auto& e : v.get_array()) {
            auto s = one(e);
            if (!s)
                return std::nullopt;
            out.push_back(std::move(*s));
        }
        return out;
    }
    auto s = one(v);
    if (!s)
        return std::nullopt;
    out.push_back(std::move(*s));
    return out;
}

/// An address and a prefix length, as IPv6 (IPv4 mapped): "10.0.0.0/8", "127.0.0.1", "fd00::/8".
struct network
{
    std::array<unsigned char, 16> bytes{};
    unsigned prefix = 128;
    bool v4 = false;
};

std::optional<network> parse_network(std::string_view text)
{
    const auto slash = text.find('/');
    boost::system::error_code ec;
    const auto a = boost::asio::ip::make_address(std::string(text.substr(0, slash)), ec);
    if (ec)
        return std::nullopt;
    network n;
    unsigned max = 128;
    if (a.is_v4()) {
        n.bytes = boost::asio::ip::make_address_v6(boost::asio::ip::v4_mapped, a.to_v4()).to_bytes();
        max = 32;
        n.v4 = true;
    } else {
        n.bytes = a.to_v6().to_bytes();
    }
    unsigned len = max;
    if (slash != std::string_view::npos) {
        const auto digits = text.substr(slash + 1);
        auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), len);
        if (err != std::errc() || end != digits.data() + digits.size() || digits.empty() || len > max)
            return std::nullopt;
    }
    n.prefix = len + (max == 32 ? 96 : 0);
    return n;
}

bool in_network(const network& net, const network& addr)
{
    for (unsigned bit = 0; bit < net.prefix; ++bit) {
        const auto mask = static_cast<unsigned char>(0x80u >> (bit % 8));
        if ((net.bytes[bit / 8] & mask) != (addr.bytes[bit / 8] & mask))
            return false;
    }
    return true;
}

/// Seconds since the epoch of "2026-01-02", "2026-01-02T03:04:05Z" (fractions and an offset-free "Z"
/// form only) or of a number of seconds.
std::optional<double> parse_date(std::string_view s)
{
    double number = 0;
    if (auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), number);
        err == std::errc() && end == s.data() + s.size())
        return number;
    const auto num = [&](std::size_t at, std::size_t len) -> std::optional<int> {
        int v = 0;
        if (at + len > s.size())
            return std::nullopt;
        auto [end, err] = std::from_chars(s.data() + at, s.data() + at + len, v);
        if (err != std::errc() || end != s.data() + at + len)
            return std::nullopt;
        return v;
    };
    auto y = num(0, 4), mo = num(5, 2), d = num(8, 2);
    if (!y || !mo || !d || s.size() < 10 || s[4] != '-' || s[7] != '-' || *mo < 1 || *mo > 12 || *d < 1 ||
        *d > 31)
        return std::nullopt;
    int hh = 0, mm = 0;
    double ss = 0;
    if (s.size() > 10) {
        if (s[10] != 'T' || s.size() < 20 || s.back() != 'Z' || s[13] != ':' || s[16] != ':')
            return std::nullopt;
        auto h = num(11, 2), m = num(14, 2);
        const auto sec = s.substr(17, s.size() - 18);
        if (!h || !m || sec.empty())
            return std::nullopt;
        auto [end, err] = std::from_chars(sec.data(), sec.data() + sec.size(), ss);
        if (err != std::errc() || end != sec.data() + sec.size())
            return std::nullopt;
        hh = *h;
        mm = *m;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    int yy = *y - (*mo <= 2 ? 1 : 0);
    const int era = (yy >= 0 ? yy : yy - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(yy - era * 400);
    const unsigned doy =
        (153 * static_cast<unsigned>(*mo + (*mo > 2 ? -3 : 9)) + 2) / 5 + static_cast<unsigned>(*d) - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    const long days = static_cast<long>(era) * 146097 + static_cast<long>(doe) - 719468;
    return static_cast<double>(days) * 86400.0 + hh * 3600.0 + mm * 60.0 + ss;
}

std::optional<double> parse_number(std::string_view s)
{
    double v = 0;
    auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (err != std::errc() || end != s.data() + s.size() || s.empty())
        return std::nullopt;
    return v;
}

bool negated(std::string_view op)
{
    return op == "StringNotEquals" || op == "StringNotEqualsIgnoreCase" || op == "StringNotLike" ||
           op == "NumericNotEquals" || op == "DateNotEquals" || op == "NotIpAddress";
}

/// Whether `value` satisfies `op` against one policy value `want` (the negated operators answer the
/// positive question; the caller negates).
bool matches_one(std::string_view op, std::string_view value, std::string_view want)
{
    if (op == "StringEquals" || op == "StringNotEquals")
        return value == want;
    if (op == "StringEqualsIgnoreCase" || op == "StringNotEqualsIgnoreCase")
        return lower(value) == lower(want);
    if (op == "StringLike" || op == "StringNotLike")
        return policy_glob(want, value);
    if (op == "Bool")
        return lower(value) == lower(want);
    if (op == "IpAddress" || op == "NotIpAddress") {
        auto net = parse_network(want);
        auto addr = parse_network(value);
        return net && addr && in_network(*net, *addr);
    }
    const bool date = op.starts_with("Date");
    auto a = date ? parse_date(value) : parse_number(value);
    auto b = date ? parse_date(want) : parse_number(want);
    if (!a || !b)
        return false;
    const auto rel = op.substr(date ? 4 : 7);
    if (rel == "Equals" || rel == "NotEquals")
        return *a == *b;
    if (rel == "LessThan")
        return *a < *b;
    if (rel == "LessThanEquals")
        return *a <= *b;
    if (rel == "GreaterThan")
        return *a > *b;
    if (rel == "GreaterThanEquals")
        return *a >= *b;
    return false;
}

const std::string* context_value(const policy_request& r, std::string_view key)
{
    for (const auto& [k, v] : r.context)
        if (k == key)
            return &v;
    return nullptr;
}

bool condition_holds(const policy_condition& c, const policy_request& r)
{
    const std::string* value = context_value(r, c.key);
    if (c.op == "Null") {
        const bool want_absent = lower(c.values.front()) == "true";
        return want_absent == (value == nullptr);
    }
    if (!value)
        return c.if_exists || negated(c.op);
    const bool any = std::any_of(c.values.begin(), c.values.end(),
                                 [&](const std::string& want) { return matches_one(c.op, *value, want); });
    return negated(c.op) ? !any : any;
}

result<std::vector<policy_condition>> parse_conditions(const json::value& block)
{
    if (!block.is_object() || block.get_object().empty())
        return malformed("Policy has an invalid condition: Condition must be a non-empty object");
    std::vector<policy_condition> out;
    for (const auto& op_member : block.get_object()) {
        const std::string raw_op(op_member.key());
        const auto& keys = op_member.value();
        std::string_view op = raw_op;
        if (op.starts_with("ForAnyValue:") || op.starts_with("ForAllValues:"))
            return malformed("Invalid Condition type : " + raw_op +
                             " (multivalued condition operators are not supported)");
        bool if_exists = false;
        if (op.ends_with("IfExists") && op != "Null") {
            if_exists = true;
            op.remove_suffix(8);
        }
        const bool known =
            op == "Null" || std::find(operators.begin(), operators.end(), op) != operators.end();
        if (!known)
            return malformed("Invalid Condition type : " + raw_op);
        if (!keys.is_object() || keys.get_object().empty())
            return malformed("Policy has an invalid condition: " + raw_op + " must name condition keys");
        std::vector<std::string> seen;
        for (const auto& key_member : keys.get_object()) {
            const std::string raw_key(key_member.key());
            const auto& v = key_member.value();
            auto key = lower(raw_key);
            if (std::find(condition_keys.begin(), condition_keys.end(), key) == condition_keys.end())
                return malformed("Policy has an invalid condition key: " + raw_key);
            // Keys are case-insensitive: aws:SourceIp and AWS:SourceIp are one key, which a reader would
            // take for two alternatives while both must hold.
            if (std::find(seen.begin(), seen.end(), key) != seen.end())
                return malformed("Policy has an invalid condition: " + raw_op + " names the key " + raw_key +
                                 " twice (condition keys are case-insensitive)");
            seen.push_back(key);
            auto values = condition_values(v);
            if (!values)
                return malformed("Policy has an invalid condition value for " + raw_key);
            for (const auto& value : *values) {
                if ((op == "IpAddress" || op == "NotIpAddress") && !parse_network(value))
                    return malformed("Invalid IP address or CIDR in condition: " + value);
                if (op.starts_with("Numeric") && !parse_number(value))
                    return malformed("Invalid numeric value in condition: " + value);
                if (op.starts_with("Date") && !parse_date(value))
                    return malformed("Invalid date in condition: " + value);
                if ((op == "Bool" || op == "Null") && lower(value) != "true" && lower(value) != "false")
                    return malformed("Invalid boolean in condition: " + value);
            }
            if (op == "Null" && values->size() != 1)
                return malformed("Policy has an invalid condition: Null takes one value");
            out.push_back(policy_condition{.op = std::string(op),
                                           .key = std::move(key),
                                           .values = std::move(*values),
                                           .if_exists = if_exists});
        }
    }
    return out;
}

/// A principal string naming a Depot user: its id, or arn:aws:iam::<account>:user/<id>.
std::optional<std::string> user_of(std::string_view p)
{
    if (p.starts_with("arn:aws:iam::")) {
        const auto rest = p.substr(13);
        const auto colon = rest.find(':');
        if (colon == std::string_view::npos || !rest.substr(colon + 1).starts_with("user/"))
            return std::nullopt;
        p = rest.substr(colon + 6);
    }
    if (p.empty() || has_wildcard(p) || p.find_first_of(":/ ") != std::string_view::npos)
        return std::nullopt;
    return std::string(p);
}

result<void> parse_principal(const json::value& v, policy_statement& s)
{
    const auto invalid = [] { return malformed("Invalid principal in policy"); };
    if (v.is_string()) {
        if (v.get_string() != "*")
            return invalid();
        s.any_principal = true;
        return ok();
    }
    if (!v.is_object() || v.get_object().empty())
        return invalid();
    for (const auto& member : v.get_object()) {
        const std::string kind(member.key());
        const auto& names = member.value();
        if (kind != "AWS" && kind != "CanonicalUser")
            return invalid();
        auto list = strings_of(names);
        if (!list)
            return invalid();
        for (const auto& n : *list) {
            if (n == "*" && kind == "AWS") {
                s.any_principal = true;
                continue;
            }
            auto user =
                kind == "AWS" ? user_of(n) : (n.empty() || has_wildcard(n) ? std::nullopt : std::optional(n));
            if (!user)
                return invalid();
            s.users.push_back(std::move(*user));
        }
    }
    return ok();
}

/// Whether some known action matching `pattern` applies to the resources of `s`.
bool action_applies(std::string_view pattern, const policy_statement& s, bool& known)
{
    bool object_resource = s.not_resource, bucket_resource = s.not_resource;
    for (const auto& r : s.resources) {
        if (r.find('/') != std::string::npos)
            object_resource = true;
        else
            bucket_resource = true;
    }
    for (const auto& a : actions) {
        if (!policy_glob(pattern, a.name, true))
            continue;
        known = true;
        if (a.object ? object_resource : bucket_resource)
            return true;
    }
    return false;
}

result<policy_statement> parse_statement(const json::value& st, std::string_view bucket)
{
    if (!st.is_object())
        return malformed("Statement must be an object");
    policy_statement s;
    bool effect = false, principal = false, resource = false, action = false;
    for (const auto& member : st.get_object()) {
        const std::string field(member.key());
        const auto& v = member.value();
        if (field == "Sid") {
            if (!v.is_string())
                return malformed("Statement Sid must be a string");
            s.sid = std::string(v.get_string());
        } else if (field == "Effect") {
            if (!is_string(v, "Allow") && !is_string(v, "Deny"))
                return malformed("Invalid effect: " + utf8_lossy(text_of(v)));
            s.allow = is_string(v, "Allow");
            effect = true;
        } else if (field == "Principal") {
            if (auto p = parse_principal(v, s); !p)
                return std::move(p).error();
            principal = true;
        } else if (field == "NotPrincipal") {
            return malformed("NotPrincipal is not supported: name the principals with Principal");
        } else if (field == "Action" || field == "NotAction") {
            if (action)
                return malformed("Statement must name either Action or NotAction, not both");
            auto list = strings_of(v);
            if (!list)
                return malformed("Policy has invalid action");
            for (auto& a : *list) {
                auto l = lower(a);
                if (l != "*" && !l.starts_with("s3:"))
                    return malformed("Policy has invalid action");
                s.actions.push_back(std::move(l));
            }
            s.not_action = field == "NotAction";
            action = true;
        } else if (field == "Resource" || field == "NotResource") {
            if (resource)
                return malformed("Statement must name either Resource or NotResource, not both");
            auto list = strings_of(v);
            if (!list)
                return malformed("Policy has invalid resource");
            for (auto& r : *list) {
                if (!r.starts_with(arn_prefix))
                    return malformed("Policy has invalid resource");
                auto rest = std::string_view(r).substr(arn_prefix.size());
                if (rest.substr(0, rest.find('/')) != bucket)
                    return malformed("Policy has invalid resource");
                s.resources.emplace_back(rest);
            }
            s.not_resource = field == "NotResource";
            resource = true;
        } else if (field == "Condition") {
            auto c = parse_conditions(v);
            if (!c)
                return std::move(c).error();
            s.conditions = std::move(*c);
        } else {
            return malformed("Unknown field " + field);
        }
    }
    if (!effect)
        return malformed("Missing required field Effect");
    if (!principal)
        return malformed("Missing required field Principal");
    if (!action)
        return malformed("Missing required field Action");
    if (!resource)
        return malformed("Missing required field Resource");
    for (const auto& a : s.actions) {
        if (a == "*")
            continue;
        bool known = false;
        const bool applies = action_applies(a, s, known);
        if (!known)
            return malformed("Policy has invalid action");
        if (!applies && !s.not_action)
            return malformed("Action does not apply to any resource(s) in statement");
    }
    return s;
}

bool principal_matches(const policy_statement& s, std::string_view user_id)
{
    if (s.any_principal)
        return true;
    return !user_id.empty() && std::find(s.users.begin(), s.users.end(), user_id) != s.users.end();
}

bool action_matches(const policy_statement& s, std::string_view action, bool exact_only)
{
    const bool any = std::any_of(s.actions.begin(), s.actions.end(), [&](const std::string& a) {
        if (exact_only && has_wildcard(a))
            return false;
        return policy_glob(a, action, true);
    });
    if (s.not_action)
        return !exact_only && !any;
    return any;
}

bool resource_matches(const policy_statement& s, const policy_request& r)
{
    std::string target(r.bucket);
    if (r.object_action)
        target += "/" + std::string(r.key);
    const bool any = std::any_of(s.resources.begin(), s.resources.end(),
                                 [&](const std::string& p) { return policy_glob(p, target); });
    return s.not_resource ? !any : any;
}

bool statement_matches(const policy_statement& s, const policy_request& r, bool exact_only)
{
    return principal_matches(s, r.user_id) && action_matches(s, r.action, exact_only) &&
           resource_matches(s, r) &&
           std::all_of(s.conditions.begin(), s.conditions.end(),
                       [&](const policy_condition& c) { return condition_holds(c, r); });
}

// --- Whether a policy is public in effect: the addresses its aws:SourceIp conditions admit ----------------

__extension__ using u128 = unsigned __int128;

/// An inclusive range of 128-bit addresses (IPv4 as IPv4-mapped IPv6).
struct address_range
{
    u128 first = 0;
    u128 last = 0;
};

constexpr u128 u128_max = ~u128(0);
constexpr u128 v4_first = u128(0xffff) << 32; // ::ffff:0.0.0.0
constexpr u128 v4_last = v4_first | 0xffffffffu;
// NAT64 prefixes (RFC 6052's 64:ff9b::/96, RFC 8215's local-use 64:ff9b:1::/48): behind a NAT64 gateway
// every IPv4 client arrives from one of them, so what they admit is counted as IPv4 addresses.
constexpr u128 nat64_first = u128(0x0064ff9b) << 96;
constexpr u128 nat64_last = nat64_first | 0xffffffffu;
constexpr u128 nat64_local_first = (u128(0x0064ff9b) << 96) | (u128(1) << 80);
constexpr u128 nat64_local_last = nat64_local_first | ((u128(1) << 80) - 1);
constexpr std::array<std::pair<u128, u128>, 3> ipv4_spaces = {
    {{v4_first, v4_last}, {nat64_first, nat64_last}, {nat64_local_first, nat64_local_last}}};

address_range range_of(const network& n)
{
    u128 a = 0;
    for (unsigned char b : n.bytes)
        a = (a << 8) | b;
    const u128 host = n.prefix == 0     ? u128_max
                      : n.prefix >= 128 ? u128(0)
                                        : (u128(1) << (128 - n.prefix)) - 1;
    return {a & ~host, (a & ~host) | host};
}

/// The union of `ranges`, sorted and merged.
std::vector<address_range> merged(std::vector<address_range> ranges)
{
    std::sort(ranges.begin(), ranges.end(),
              [](const address_range& a, const address_range& b) { return a.first < b.first; });
    std::vector<address_range> out;
    for (const auto& r : ranges) {
        if (!out.empty() && (out.back().last == u128_max || r.first <= out.back().last + 1))
            out.back().last = std::max(out.back().last, r.last);
        else
            out.push_back(r);
    }
    return out;
}

/// Whether the union of `ranges` admits more than narrow_ipv4_prefix's IPv4 addresses or
/// narrow_ipv6_prefix's IPv6 addresses outside IPv4.
bool too_wide(const std::vector<address_range>& ranges)
{
    constexpr u128 v4_limit = u128(1) << (32 - narrow_ipv4_prefix);
    constexpr u128 v6_limit = u128(1) << (128 - narrow_ipv6_prefix);
    u128 v4 = 0, v6 = 0;
    for (const auto& r : merged(ranges)) {
        if (r.first == 0 && r.last == u128_max)
            return true;
        const u128 count = r.last - r.first + 1;
        u128 inside = 0;
        for (const auto& [first, last] : ipv4_spaces)
            if (r.last >= first && r.first <= last)
                inside += std::min(r.last, last) - std::max(r.first, first) + 1;
        // Each count is below 2^128 here, and the sums stop once past a limit, so nothing overflows.
        v4 += inside;
        if (count - inside > v6_limit)
            return true;
        v6 += count - inside;
        if (v4 > v4_limit || v6 > v6_limit)
            return true;
    }
    return false;
}

/// A condition that names fixed users: aws:userid StringEquals without wildcards.
bool has_fixed_user(const policy_statement& s)
{
    return std::any_of(s.conditions.begin(), s.conditions.end(), [](const policy_condition& c) {
        return !c.if_exists && c.key == "aws:userid" && c.op == "StringEquals" &&
               std::none_of(c.values.begin(), c.values.end(),
                            [](const std::string& v) { return has_wildcard(v); });
    });
}

/// The addresses a statement admits by its aws:SourceIp IpAddress conditions (all must hold, so the smallest
/// one bounds them); nullopt when none narrows by address. A ...IfExists form does not narrow (a missing key
/// passes it).
std::optional<std::vector<address_range>> narrowest_sources(const policy_statement& s)
{
    std::optional<std::vector<address_range>> best;
    u128 best_size = u128_max;
    for (const auto& c : s.conditions) {
        if (c.if_exists || c.key != "aws:sourceip" || c.op != "IpAddress")
            continue;
        std::vector<address_range> ranges;
        for (const auto& v : c.values)
            if (auto n = parse_network(v))
                ranges.push_back(range_of(*n));
        ranges = merged(std::move(ranges));
        u128 size = 0;
        for (const auto& r : ranges)
            size = (r.last - r.first >= u128_max - size) ? u128_max : size + (r.last - r.first + 1);
        if (!best || size < best_size) {
            best = std::move(ranges);
            best_size = size;
        }
    }
    return best;
}

/// Sets each statement's public_in_effect: public on its own, or narrowed by address only, with the
/// addresses of all such statements together too many (each a narrow range, their union the Internet).
void judge_publicity(bucket_policy& p)
{
    std::vector<address_range> all;
    std::vector<policy_statement*> by_address;
    for (auto& s : p.statements) {
        s.public_in_effect = false;
        if (!s.allow || !s.any_principal || has_fixed_user(s))
            continue;
        auto admitted = narrowest_sources(s);
        if (!admitted || too_wide(*admitted)) {
            s.public_in_effect = true;
            continue;
        }
        all.insert(all.end(), admitted->begin(), admitted->end());
        by_address.push_back(&s);
    }
    if (too_wide(all))
        for (auto* s : by_address)
            s->public_in_effect = true;
}

} // namespace

bool policy_glob(std::string_view pattern, std::string_view text, bool ignore_case)
{
    const auto eq = [&](char a, char b) {
        return ignore_case ? std::tolower(static_cast<unsigned char>(a)) ==
                                 std::tolower(static_cast<unsigned char>(b))
                           : a == b;
    };
    // Iterative matching with backtracking to the last '*'.
    std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
    while (t < text.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || (pattern[p] != '*' && eq(pattern[p], text[t])))) {
            ++p;
            ++t;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            mark = t;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            t = ++mark;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*')
        ++p;
    return p == pattern.size();
}

std::span<const known_action> known_s3_actions()
{
    return actions;
}

result<bucket_policy> parse_bucket_policy(std::string_view text, std::string_view bucket)
{
    if (text.size() > max_bucket_policy_bytes)
        return malformed("Policies must be no more than 20 KB");
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || text[first] != '{')
        return malformed("Policies must be valid JSON and the first byte must be '{'");
    const auto doc = json_parse(text);
    if (!doc || !doc->is_object())
        return malformed("This policy contains invalid Json");
    // A reviewer reads the first "Effect" of a statement; the parser would keep the last.
    if (const auto dup = duplicate_member(text))
        return malformed("This policy names " +
                         (dup->size() <= 64 ? "the member '" + *dup + "'" : std::string("a member")) +
                         " twice in one object");
    bucket_policy out;
    bool statement = false;
    for (const auto& member : doc->get_object()) {
        const std::string field(member.key());
        const auto& v = member.value();
        if (field == "Version") {
            if (!is_string(v, "2012-10-17") && !is_string(v, "2008-10-17"))
                return malformed("The policy must contain a valid version string");
        } else if (field == "Id") {
            if (!v.is_string())
                return malformed("Id must be a string");
        } else if (field == "Statement") {
            statement = true;
            if (v.is_array()) {
                for (const auto& st : v.get_array()) {
                    auto s = parse_statement(st, bucket);
                    if (!s)
                        return std::move(s).error();
                    out.statements.push_back(std::move(*s));
                }
            } else {
                auto s = parse_statement(v, bucket);
                if (!s)
                    return std::move(s).error();
                out.statements.push_back(std::move(*s));
            }
        } else {
            return malformed("Unknown field " + field);
        }
    }
    if (!statement)
        return malformed("Missing required field Statement");
    if (out.statements.empty())
        return malformed("Could not parse the policy: Statement is empty!");
    judge_publicity(out);
    return out;
}

std::vector<std::string> named_users(const bucket_policy& p)
{
    std::vector<std::string> out;
    for (const auto& s : p.statements)
        for (const auto& u : s.users)
            if (std::find(out.begin(), out.end(), u) == out.end())
                out.push_back(u);
    return out;
}

bool is_public(const policy_statement& s)
{
    if (!s.allow || !s.any_principal || has_fixed_user(s))
        return false;
    auto admitted = narrowest_sources(s);
    return !admitted || too_wide(*admitted);
}

bool is_public(const bucket_policy& p)
{
    return std::any_of(p.statements.begin(), p.statements.end(),
                       [](const policy_statement& s) { return s.public_in_effect; });
}

bool may_allow(const bucket_policy& p, const policy_request& r)
{
    return std::any_of(p.statements.begin(), p.statements.end(), [&](const policy_statement& s) {
        return s.allow && !(r.ignore_public && s.public_in_effect) && principal_matches(s, r.user_id) &&
               action_matches(s, r.action, r.exact_allow_only);
    });
}

policy_effect evaluate(const bucket_policy& p, const policy_request& r)
{
    bool allowed = false;
    for (const auto& s : p.statements) {
        if (!s.allow) {
            if (statement_matches(s, r, false))
                return policy_effect::deny;
            continue;
        }
        if (allowed || (r.ignore_public && s.public_in_effect))
            continue;
        allowed = statement_matches(s, r, r.exact_allow_only);
    }
    return allowed ? policy_effect::allow : policy_effect::none;
}

} // namespace depot::auth
