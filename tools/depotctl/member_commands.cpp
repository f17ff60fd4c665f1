// depotctl member set|remove|list: a team's members and their roles through the REST API.
#include "remote_common.hpp"

#include <iostream>

namespace depot::ctl {

int member_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    const bool as_json = c.has("--json");
    if (p.size() < 3)
        throw failure("usage: depotctl member " + p[1] + " TEAM ... (see depotctl member -h)", 2);
    api_client api(ep);
    const std::string base = "/api/v1/teams/" + seg(p[2]) + "/members";
    if (p[1] == "list") {
        auto items = api.all(base);
        if (as_json)
            print_json(items);
        else
            for (const auto& m : items)
                std::cout << str(m, "user") << "\t" << str(m, "role") << "\n";
        return 0;
    }
    if (p[1] == "set") {
        if (p.size() < 5)
            throw failure("usage: depotctl member set TEAM USER ROLE (reader, writer or admin)", 2);
        auto m = api.call("PUT", base + "/" + seg(p[3]), boost::json::object{{"role", p[4]}});
        if (as_json)
            print_json(m);
        else
            std::cout << p[3] << " is " << (str(m, "role").empty() ? p[4] : str(m, "role")) << " of " << p[2]
                      << "\n";
        return 0;
    }
    // remove
    if (p.size() < 4)
        throw failure("usage: depotctl member remove TEAM USER", 2);
    api.call("DELETE", base + "/" + seg(p[3]));
    if (as_json)
        print_json({{"deleted", "member"}, {"team", p[2]}, {"user", p[3]}});
    else
        std::cout << "removed " << p[3] << " from " << p[2] << "\n";
    return 0;
}

} // namespace depot::ctl
