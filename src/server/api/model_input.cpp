// Parsers of the model registry's request bodies (server/api/model_input.hpp).
#include "server/api/model_input.hpp"

#include <boost/json/serialize.hpp>

namespace depot::server::api {

using registry::team_role;

bool valid_name(std::string_view s, name_kind kind)
{
    const std::size_t max = kind == name_kind::model || kind == name_kind::label ? 128 : 63;
    if (s.empty() || s.size() > max)
        return false;
    auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
    auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    const bool cased = kind == name_kind::alias || kind == name_kind::label;
    auto alnum = [&](char c) { return lower(c) || digit(c) || (cased && upper(c)); };
    if (kind == name_kind::alias ? !(lower(s[0]) || upper(s[0])) : !alnum(s[0]))
        return false;
    bool only_digits = true;
    bool only_hex = true;
    for (char c : s) {
        only_digits = only_digits && digit(c);
        only_hex = only_hex && (digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'));
        if (!(alnum(c) || c == '.' || c == '_' || c == '-' || (kind == name_kind::label && c == '+')))
            return false;
    }
    const bool commit_id = only_hex && s.size() == 40;
    if ((kind == name_kind::alias || kind == name_kind::label) && commit_id)
        return false;
    return !(kind == name_kind::label && only_digits);
}

result<team_role> role_field(const json::object& o, std::string_view name)
{
    auto s = string_field(o, name);
    if (!s)
        return std::move(s).error();
    auto r = registry::team_role_of(*s);
    if (!r)
        return make_error(errc::invalid_argument,
                          "The field '" + std::string(name) + "' must be reader, writer, maintainer or admin",
                          std::string(name));
    return *r;
}

result<registry::policy_override> policy_fields(const json::object& o)
{
    if (auto only = only_fields(o, {"required_approvals", "approver_role", "protected_aliases", "four_eyes"});
        !only)
        return std::move(only).error();
    registry::policy_override p;
    if (o.contains("required_approvals")) {
        auto n = integer_field(o, "required_approvals", 1, 10);
        if (!n)
            return std::move(n).error();
        p.required_approvals = static_cast<int>(*n);
    }
    if (o.contains("approver_role")) {
        auto r = role_field(o, "approver_role");
        if (!r)
            return std::move(r).error();
        p.approver_role = *r;
    }
    if (o.contains("protected_aliases")) {
        const auto& v = o.at("protected_aliases");
        if (!v.is_array())
            return make_error(errc::invalid_argument, "protected_aliases must be an array of alias names");
        std::vector<std::string> names;
        for (const auto& a : v.as_array()) {
            if (!a.is_string() || !valid_name(a.as_string(), name_kind::alias))
                return make_error(errc::invalid_argument,
                                  "protected_aliases must be an array of alias names");
            names.emplace_back(a.as_string());
        }
        p.protected_aliases = std::move(names);
    }
    if (o.contains("four_eyes")) {
        const auto& v = o.at("four_eyes");
        const auto rule = v.is_string() ? registry::four_eyes_rule_of(v.as_string()) : std::nullopt;
        if (!rule)
            return make_error(errc::invalid_argument,
                              "The field 'four_eyes' must be author_and_submitter or all_contributors",
                              "four_eyes");
        p.four_eyes = *rule;
    }
    return p;
}

result<registry::policy_override> optional_policy(const json::object& body)
{
    auto it = body.find("policy");
    if (it == body.end())
        return registry::policy_override{};
    if (!it->value().is_object())
        return make_error(errc::invalid_argument, "The field 'policy' must be an object");
    return policy_fields(it->value().as_object());
}

result<std::string> optional_string(const json::object& o, std::string_view name, std::size_t max)
{
    if (!o.contains(name))
        return std::string();
    auto s = string_field(o, name);
    if (!s)
        return std::move(s).error();
    if (s->size() > max)
        return make_error(errc::invalid_argument, "The field '" + std::string(name) + "' is too long",
                          std::string(name));
    return s;
}

result<std::string> optional_object(const json::object& o, std::string_view name)
{
    auto it = o.find(name);
    if (it == o.end())
        return std::string("{}");
    if (!it->value().is_object())
        return make_error(errc::invalid_argument, "The field '" + std::string(name) + "' must be an object",
                          std::string(name));
    auto text = json::serialize(it->value());
    if (text.size() > 64 * 1024)
        return make_error(errc::invalid_argument, "The field '" + std::string(name) + "' is too large",
                          std::string(name));
    return text;
}

asio::awaitable<result<std::string>> comment_of(request_context& ctx)
{
    if (ctx.content_length.value_or(0) == 0)
        co_return std::string();
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    if (auto only = only_fields(*body, {"comment"}); !only)
        co_return std::move(only).error();
    co_return optional_string(*body, "comment");
}

result<std::optional<registry::label_match>> label_param(const request_context& ctx)
{
    auto v = ctx.param("label");
    if (!v)
        return std::optional<registry::label_match>();
    const auto eq = v->find('=');
    if (eq == std::string_view::npos || eq == 0)
        return make_error(errc::invalid_argument, "label must read key=value (a label of the versions)",
                          "label");
    if (eq > 128 || v->size() - eq - 1 > 1024)
        return make_error(errc::invalid_argument, "label: the key may have 128 bytes at most, the value 1024",
                          "label");
    return std::optional<registry::label_match>(
        registry::label_match{std::string(v->substr(0, eq)), std::string(v->substr(eq + 1))});
}

result<std::string> name_param(const request_context& ctx)
{
    auto v = ctx.param("name");
    if (!v)
        return std::string();
    if (v->size() > 128)
        return make_error(errc::invalid_argument, "name (a part of model names) may have 128 bytes at most",
                          "name");
    return std::string(*v);
}

} // namespace depot::server::api
