#include "s3/post_policy.hpp"

#include "common/http_date.hpp"
#include "common/json.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace depot::s3 {
namespace {

namespace json = boost::json;

error invalid(std::string_view why)
{
    return make_error(errc::invalid_argument, "Invalid Policy: " + std::string(why));
}

error refused(std::string_view why)
{
    return make_error(errc::access_denied, "Invalid according to Policy: " + std::string(why));
}

std::string lower(std::string_view s)
{
    std::string out(s);
    for (auto& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string condition_text(std::string_view op, std::string_view field, std::string_view value)
{
    return "[\"" + std::string(op) + "\", \"$" + std::string(field) + "\", " + json_quote(value) + "]";
}

std::optional<std::uint64_t> size_of(const json::value& j)
{
    if (j.is_uint64())
        return j.get_uint64();
    if (j.is_int64()) {
        auto v = j.get_int64();
        if (v < 0)
            return std::nullopt;
        return static_cast<std::uint64_t>(v);
    }
    if (j.is_string()) {
        const auto& s = j.get_string();
        std::uint64_t v = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc{} || end != s.data() + s.size())
            return std::nullopt;
        return v;
    }
    return std::nullopt;
}

/// "$name" → "name" (lower-case); nullopt without the '$'.
std::optional<std::string> field_of(const json::value& j)
{
    if (!j.is_string())
        return std::nullopt;
    const std::string_view s(j.get_string());
    if (s.size() < 2 || s.front() != '$')
        return std::nullopt;
    return lower(s.substr(1));
}

result<void> parse_condition(const json::value& value, std::vector<policy_condition>& out)
{
    if (value.is_object()) {
        const auto& o = value.get_object();
        if (o.empty())
            return invalid("Invalid Simple-Condition: Simple-Conditions must have exactly one property "
                           "specified.");
        for (const auto& member : o) {
            if (!member.value().is_string())
                return invalid("Invalid Simple-Condition: value must be a string.");
            policy_condition pc;
            pc.what = policy_condition::kind::eq;
            pc.field = lower(member.key());
            pc.value = std::string(member.value().get_string());
            pc.text = condition_text("eq", pc.field, pc.value);
            out.push_back(std::move(pc));
        }
        return ok();
    }
    if (!value.is_array() || value.get_array().empty() || !value.get_array()[0].is_string())
        return invalid("Invalid Condition: conditions must be objects or arrays.");
    const auto& c = value.get_array();
    const auto op = lower(c[0].get_string());
    policy_condition pc;
    if (op == "content-length-range") {
        if (c.size() != 3)
            return invalid("Invalid content-length-range: it takes a minimum and a maximum.");
        auto min = size_of(c[1]);
        auto max = size_of(c[2]);
        if (!min || !max || *min > *max)
            return invalid("Invalid content-length-range: minimum and maximum must be integers, minimum "
                           "at most maximum.");
        pc.what = policy_condition::kind::content_length_range;
        pc.field = "content-length";
        pc.min = *min;
        pc.max = *max;
        pc.text = "[\"content-length-range\", " + std::to_string(*min) + ", " + std::to_string(*max) + "]";
        out.push_back(std::move(pc));
        return ok();
    }
    if (op != "eq" && op != "starts-with")
        return invalid("Invalid Condition: unknown operation " + json_quote(op) + ".");
    if (c.size() != 3)
        return invalid("Invalid Condition: " + op + " takes a field and a value.");
    auto field = field_of(c[1]);
    if (!field || !c[2].is_string())
        return invalid("Invalid Condition: " + op + " takes a \"$field\" and a string value.");
    pc.what = op == "eq" ? policy_condition::kind::eq : policy_condition::kind::starts_with;
    pc.field = std::move(*field);
    pc.value = std::string(c[2].get_string());
    pc.text = condition_text(op, pc.field, pc.value);
    out.push_back(std::move(pc));
    return ok();
}

const std::string* find_field(const std::vector<form_field>& fields, std::string_view name)
{
    for (const auto& [n, v] : fields)
        if (n == name)
            return &v;
    return nullptr;
}

bool holds(const policy_condition& c, std::string_view value)
{
    if (c.what == policy_condition::kind::eq)
        return value == c.value;
    if (c.field != "content-type")
        return value.starts_with(c.value);
    // Content-Type may list several types; each must start with the prefix.
    while (true) {
        auto comma = value.find(',');
        auto item = value.substr(0, comma);
        while (!item.empty() && item.front() == ' ')
            item.remove_prefix(1);
        if (!item.starts_with(c.value))
            return false;
        if (comma == std::string_view::npos)
            return true;
        value.remove_prefix(comma + 1);
    }
}

} // namespace

bool is_policy_exempt(std::string_view field) noexcept
{
    return field == "policy" || field == "file" || field == "x-amz-signature" || field == "awsaccesskeyid" ||
           field == "signature" || field.starts_with("x-ignore-");
}

result<post_policy> parse_post_policy(std::string_view text)
{
    auto parsed_doc = json_parse(text);
    if (!parsed_doc || !parsed_doc->is_object())
        return invalid("Invalid JSON.");
    if (duplicate_member(text))
        return invalid("Invalid JSON: a member is named twice in one object.");
    const auto& doc = parsed_doc->get_object();
    const auto* exp = doc.if_contains("expiration");
    if (exp == nullptr)
        return invalid("Policy missing expiration.");
    if (!exp->is_string())
        return invalid("Invalid 'expiration' value: it must be an ISO 8601 date.");
    const std::string_view exp_text(exp->get_string());
    auto when = parse_iso8601(exp_text);
    if (!when)
        return invalid("Invalid 'expiration' value: '" + utf8_lossy(exp_text) + "'");
    const auto* conditions = doc.if_contains("conditions");
    if (conditions == nullptr)
        return invalid("Policy missing conditions.");
    if (!conditions->is_array())
        return invalid("Invalid 'conditions' value: it must be a list.");
    post_policy out;
    out.expiration = *when;
    for (const auto& c : conditions->get_array())
        if (auto parsed = parse_condition(c, out.conditions); !parsed)
            return std::move(parsed).error();
    return out;
}

result<size_range> check_post_policy(const post_policy& policy, const std::vector<form_field>& fields,
                                     std::string_view bucket, std::chrono::system_clock::time_point now)
{
    if (now > policy.expiration)
        return refused("Policy expired.");
    size_range range;
    for (const auto& c : policy.conditions) {
        if (c.what == policy_condition::kind::content_length_range) {
            range.min = std::max(range.min, c.min);
            range.max = range.max ? std::min(*range.max, c.max) : c.max;
            continue;
        }
        const std::string* value = nullptr;
        std::string bucket_value;
        if (c.field == "bucket") {
            bucket_value = std::string(bucket);
            value = &bucket_value;
        } else {
            value = find_field(fields, c.field);
        }
        if (!value || !holds(c, *value))
            return refused("Policy Condition failed: " + c.text);
    }
    for (const auto& field : fields) {
        const std::string& name = field.first; // (clang before 16 cannot capture a structured binding)
        if (is_policy_exempt(name))
            continue;
        bool covered = std::any_of(policy.conditions.begin(), policy.conditions.end(),
                                   [&](const policy_condition& c) { return c.field == name; });
        if (!covered)
            return refused("Extra input fields: " + name);
    }
    return range;
}

} // namespace depot::s3
