// depotctl alias set|delete|list: aliases of a model through the REST API.
#include "remote_common.hpp"

#include <algorithm>
#include <iostream>

namespace depot::ctl {

int alias_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    const bool as_json = c.has("--json");
    api_client api(ep);
    if (p.size() >= 3 && p[1] == "list") {
        auto ref = parse_model_ref(p[2], false);
        auto items = api.all(ref.base() + "/aliases");
        if (as_json)
            print_json(items);
        else
            for (const auto& a : items)
                std::cout << str(a, "name") << "\t" << str(a, "version") << "\t"
                          << (flag(a, "protected") ? "protected" : "") << "\n";
        return 0;
    }
    if (p.size() >= 5 && p[1] == "set") {
        auto ref = parse_model_ref(p[2], false);
        boost::json::object body{{"version", p[4]}};
        if (std::all_of(p[4].begin(), p[4].end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
            body["version"] = std::stoi(p[4]);
        auto a = api.call("PUT", ref.base() + "/aliases/" + seg(p[3]), body, if_match_header(c));
        if (as_json)
            print_json(a);
        else
            std::cout << ref.team << "/" << ref.model << ":" << str(a, "name") << " -> " << str(a, "version")
                      << "\n";
        return 0;
    }
    if (p.size() >= 4 && p[1] == "delete") {
        auto ref = parse_model_ref(p[2], false);
        api.call("DELETE", ref.base() + "/aliases/" + seg(p[3]), nullptr, if_match_header(c));
        if (as_json)
            print_json({{"deleted", "alias"}, {"team", ref.team}, {"model", ref.model}, {"alias", p[3]}});
        else
            std::cout << "deleted alias " << p[3] << "\n";
        return 0;
    }
    throw failure("usage: depotctl alias set TEAM/MODEL ALIAS VERSION | alias delete TEAM/MODEL ALIAS | "
                  "alias list TEAM/MODEL",
                  2);
}

} // namespace depot::ctl
