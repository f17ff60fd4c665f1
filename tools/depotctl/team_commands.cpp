// depotctl team create|list|show: teams through the REST API.
#include "remote_common.hpp"

#include <iostream>

namespace depot::ctl {

int team_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    const bool as_json = c.has("--json");
    api_client api(ep);
    if (p[1] == "list") {
        auto items = api.all("/api/v1/teams");
        if (as_json)
            print_json(items);
        else
            for (const auto& t : items)
                std::cout << str(t, "name") << "\t" << (str(t, "role").empty() ? "-" : str(t, "role"))
                          << "\n";
        return 0;
    }
    if (p.size() < 3)
        throw failure("usage: depotctl team " + p[1] + " TEAM", 2);
    if (p[1] == "create") {
        boost::json::object body{{"name", p[2]}};
        auto policy = policy_body(c);
        if (!policy.empty())
            body["default_policy"] = policy;
        auto t = api.call("POST", "/api/v1/teams", body);
        if (as_json)
            print_json(t);
        else
            std::cout << "created team " << str(t, "name") << "\n";
        return 0;
    }
    // show
    const std::string base = "/api/v1/teams/" + seg(p[2]);
    auto t = api.call("GET", base);
    t.as_object()["members"] = api.all(base + "/members");
    if (as_json) {
        print_json(t);
        return 0;
    }
    std::cout << str(t, "name") << "  created " << str(t, "created_at")
              << "  your role: " << (str(t, "role").empty() ? "-" : str(t, "role"))
              << "\n  default policy: " << str(t, "default_policy") << "\n";
    for (const auto& m : items(t, "members"))
        std::cout << "  member " << str(m, "user") << "\t" << str(m, "role") << "\n";
    return 0;
}

} // namespace depot::ctl
