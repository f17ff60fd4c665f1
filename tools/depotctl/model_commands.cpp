// depotctl model create|list|show: models through the REST API.
#include "remote_common.hpp"

#include <algorithm>
#include <iostream>

namespace depot::ctl {

int model_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    const bool as_json = c.has("--json");
    api_client api(ep);
    if (p.size() >= 3 && p[1] == "list") {
        auto items = api.all("/api/v1/teams/" + seg(p[2]) + "/models");
        if (as_json)
            print_json(items);
        else
            for (const auto& m : items)
                std::cout << str(m, "name") << "\ts3://" << str(m, "bucket") << "/" << str(m, "prefix")
                          << "\t" << str(m, "version_count") << " versions\t" << str(m, "description")
                          << "\n";
        return 0;
    }
    if (p.size() >= 3 && p[1] == "create") {
        auto ref = parse_model_ref(p[2], false);
        if (!c.has("--bucket"))
            throw failure("model create needs --bucket (and --prefix, default MODEL/)", 2);
        boost::json::object body{{"name", ref.model},
                                 {"bucket", c.get("--bucket")},
                                 {"prefix", c.get("--prefix", ref.model + "/")}};
        if (c.has("--description"))
            body["description"] = c.get("--description");
        auto m = api.call("POST", "/api/v1/teams/" + seg(ref.team) + "/models", body);
        if (as_json)
            print_json(m);
        else
            std::cout << "created model " << ref.team << "/" << ref.model << " on s3://" << str(m, "bucket")
                      << "/" << str(m, "prefix") << "\n";
        return 0;
    }
    if (p.size() >= 3 && p[1] == "show") {
        auto ref = parse_model_ref(p[2], false);
        auto m = api.call("GET", ref.base());
        auto aliases = api.all(ref.base() + "/aliases");
        if (as_json) {
            m.as_object()["aliases"] = aliases;
            print_json(m);
            return 0;
        }
        std::cout << ref.team << "/" << ref.model << "  s3://" << str(m, "bucket") << "/" << str(m, "prefix")
                  << "\n  " << str(m, "version_count") << " versions, created by " << str(m, "created_by")
                  << " at " << str(m, "created_at") << "\n  policy: " << str(m, "policy") << "\n";
        if (!str(m, "description").empty())
            std::cout << "  " << str(m, "description") << "\n";
        for (const auto& a : aliases)
            std::cout << "  alias " << str(a, "name") << " -> " << str(a, "version")
                      << (flag(a, "protected") ? " (protected)" : "") << "\n";
        return 0;
    }
    throw failure("usage: depotctl model create|list|show ...", 2);
}

} // namespace depot::ctl
