#include "s3/post_policy.hpp"

#include "common/http_date.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>

namespace depot::s3 {
namespace {

using json = nlohmann::json;

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

std::string json_quoted(std::string_view s)
{
    return json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string condition_text(std::string_view op, std::string_view field, std::string_view value)
{
    return "[\"" + std::string(op) + "\", \"$" + std::string(field) + "\", " + json_quoted(value) + "]";
}

std::optional<std::uint64_t> size_of(const json& j)
{
    if (j.is_number_unsigned())
        return j.get<std::uint64_t>();
    if (j.is_number_integer()) {
        auto v = j.get<std::int64_t>();
        if (v < 0)
            return std::nullopt;
        return static_cast<std::uint64_t>(v);
    }
    if (j.is_string()) {
        const auto& s = j.get_ref<const std::string&>();
        std::uint64_t v = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc{} || end != s.data() + s.size())
            return std::nullopt;
        return v;
    }
    return std::nullopt;
}

/// "$name" → "name" (lower-case); nullopt without the '$'.
std::optional<std::string> field_of(const json& j)
{
    if (!j.is_string())
        return std::nullopt;
    const auto& s = j.get_ref<const std::string&>();
    if (s.size() < 2 || s.front() != '$')
        return std::nullopt;
    return lower(std::string_view(s).substr(1));
}

result<void> parse_condition(const json& c, std::vector<policy_condition>& out)
{
    if (c.is_object()) {
        if (c.empty())
            return invalid("Invalid Simple-Condition: Simple-Conditions must have exactly one property "
                           "specified.");
        for (auto it = c.begin(); it != c.end(); ++it) {
            if (!it.value().is_string())
                return invalid("Invalid Simple-Condition: value must be a string.");
            policy_condition pc;
            pc.what = policy_condition::kind::eq;
            pc.field = lower(it.key());
            pc.value = it.value().get<std::string>();
            pc.text = condition_text("eq", pc.field, pc.value);
            out.push_back(std::move(pc));
        }
        return ok();
    }
    if (!c.is_array() || c.empty() || !c[0].is_string())
        return invalid("Invalid Condition: conditions must be objects or arrays.");
    const auto op = lower(c[0].get<std::string>());
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
        return invalid("Invalid Condition: unknown operation " + json_quoted(op) + ".");
    if (c.size() != 3)
        return invalid("Invalid Condition: " + op + " takes a field and a value.");
    auto field = field_of(c[1]);
    if (!field || !c[2].is_string())
        return invalid("Invalid Condition: " + op + " takes a \"$field\" and a string value.");
    pc.what = op == "eq" ? policy_condition::kind::eq : policy_condition::kind::starts_with;
    pc.field = std::move(*field);
    pc.value = c[2].get<std::string>();
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
    auto doc = json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
        return invalid("Invalid JSON.");
    auto exp = doc.find("expiration");
    if (exp == doc.end())
        return invalid("Policy missing expiration.");
    if (!exp->is_string())
        return invalid("Invalid 'expiration' value: it must be an ISO 8601 date.");
    auto when = parse_iso8601(exp->get_ref<const std::string&>());
    if (!when)
        return invalid("Invalid 'expiration' value: '" + exp->get<std::string>() + "'");
    auto conditions = doc.find("conditions");
    if (conditions == doc.end())
        return invalid("Policy missing conditions.");
    if (!conditions->is_array())
        return invalid("Invalid 'conditions' value: it must be a list.");
    post_policy out;
    out.expiration = *when;
    for (const auto& c : *conditions)
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
