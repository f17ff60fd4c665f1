// depotctl policy get|set: a model's approval policy (the model's overrides over its team's default) through
// the REST API.
#include "remote_common.hpp"

#include <iostream>

namespace depot::ctl {

boost::json::object policy_body(const cli& c)
{
    boost::json::object p;
    if (c.has("--required-approvals")) {
        try {
            p["required_approvals"] = std::stoi(c.get("--required-approvals"));
        } catch (const std::exception&) {
            throw failure("--required-approvals needs a number", 2);
        }
    }
    if (c.has("--approver-role"))
        p["approver_role"] = c.get("--approver-role");
    if (c.has("--protected-aliases"))
        p["protected_aliases"] = comma_list(c.get("--protected-aliases"));
    return p;
}

int policy_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    if (p.size() < 3)
        throw failure("usage: depotctl policy " + p[1] + " TEAM/MODEL", 2);
    auto ref = parse_model_ref(p[2], false);
    api_client api(ep);
    json m;
    if (p[1] == "set") {
        auto policy = policy_body(c);
        if (policy.empty())
            throw failure("policy set needs --required-approvals, --approver-role or --protected-aliases", 2);
        m = api.call("PATCH", ref.base(), boost::json::object{{"policy", policy}});
    } else {
        m = api.call("GET", ref.base());
    }
    static const json none;
    const auto* found = member(m, "policy");
    const json& policy = found != nullptr ? *found : none;
    if (c.has("--json")) {
        print_json(policy);
        return 0;
    }
    std::cout << ref.team << "/" << ref.model << ": " << str(policy, "required_approvals")
              << " approval(s) by a " << str(policy, "approver_role") << " or higher; protected aliases:";
    for (const auto& a : items(policy, "protected_aliases"))
        std::cout << " " << std::string(a.as_string());
    std::cout << "\n";
    return 0;
}

} // namespace depot::ctl
