// depotctl version ...: model versions and their review states through the REST API.
#include "remote_common.hpp"

#include <algorithm>
#include <iostream>
#include <set>

namespace depot::ctl {

int version_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    const bool as_json = c.has("--json");
    if (p.size() < 3)
        throw failure("usage: depotctl version create|list|show|diff|submit|approve|reject|deprecate|archive "
                      "TEAM/MODEL[:VERSION]",
                      2);
    api_client api(ep);
    const auto& verb = p[1];
    if (verb == "list") {
        auto ref = parse_model_ref(p[2], false);
        auto items = api.all(ref.base() + "/versions");
        if (as_json)
            print_json(items);
        else
            for (const auto& v : items)
                print_version(v);
        return 0;
    }
    if (verb == "create") {
        auto ref = parse_model_ref(p[2], false);
        auto v = api.call("POST", ref.base() + "/versions", version_body(c));
        if (as_json)
            print_json(v);
        else
            print_version(v);
        return 0;
    }
    auto ref = parse_model_ref(p[2], true);
    if (ref.ref.empty())
        ref.ref = "latest";
    const auto vpath = ref.base() + "/versions/" + seg(ref.ref);
    if (verb == "show") {
        auto v = api.call("GET", vpath);
        if (c.has("--files"))
            v.as_object()["files"] = api.all(vpath + "/files");
        if (as_json) {
            print_json(v);
            return 0;
        }
        print_version(v);
        if (!str(v, "description").empty())
            std::cout << "  " << str(v, "description") << "\n";
        if (const auto* metrics = member(v, "metrics");
            metrics && metrics->is_object() && !metrics->get_object().empty())
            std::cout << "  metrics: " << str(v, "metrics") << "\n";
        for (const auto& f : items(v, "files"))
            std::cout << "  " << str(f, "sha256").substr(0, 12) << "  " << str(f, "size") << "\t"
                      << str(f, "path") << "\n";
        return 0;
    }
    if (verb == "diff") {
        if (p.size() < 4)
            throw failure("usage: depotctl version diff TEAM/MODEL:VERSION OTHER_VERSION", 2);
        auto d = api.call("GET", vpath + "/diff?against=" + seg(p[3]));
        if (as_json) {
            print_json(d);
            return 0;
        }
        for (const auto& f : items(d, "added"))
            std::cout << "+ " << str(f, "path") << "\n";
        for (const auto& f : items(d, "removed"))
            std::cout << "- " << str(f, "path") << "\n";
        for (const auto& f : items(d, "changed"))
            std::cout << "~ " << str(f, "path") << "\n";
        return 0;
    }
    static const std::set<std::string> transitions = {"submit", "approve", "reject", "deprecate", "archive"};
    if (transitions.count(verb)) {
        boost::json::object body;
        if (c.has("--comment"))
            body["comment"] = c.get("--comment");
        auto v = api.call("POST", vpath + "/" + verb, body);
        if (as_json)
            print_json(v);
        else
            print_version(v);
        return 0;
    }
    throw failure("unknown version command '" + verb + "'", 2);
}

} // namespace depot::ctl
