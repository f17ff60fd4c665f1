// depotctl snapshot ...: bucket snapshots through the REST API.
#include "remote_common.hpp"

#include <algorithm>
#include <iostream>

namespace depot::ctl {

int snapshot_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    const bool as_json = c.has("--json");
    if (p.size() < 3)
        throw failure("usage: depotctl snapshot create|list|show|delete|restore BUCKET [NAME]", 2);
    api_client api(ep);
    const auto& verb = p[1];
    const auto base = "/api/v1/buckets/" + seg(p[2]) + "/snapshots";
    auto print = [&](const json& snap) {
        std::cout << str(snap, "name") << "\ts3://" << p[2] << "/" << str(snap, "s3_prefix") << "\t"
                  << (str(snap, "prefix").empty() ? "(whole bucket)" : "prefix " + str(snap, "prefix"))
                  << "\t" << str(snap, "created_by") << "\t" << str(snap, "created_at") << "\n";
    };
    if (verb == "list") {
        auto items = api.all(base);
        if (as_json)
            print_json(items);
        else
            for (const auto& snap : items)
                print(snap);
        return 0;
    }
    if (p.size() < 4)
        throw failure("usage: depotctl snapshot " + verb + " BUCKET NAME", 2);
    const auto one = base + "/" + seg(p[3]);
    json result;
    if (verb == "create") {
        boost::json::object body{{"name", p[3]}};
        if (c.has("--prefix"))
            body["prefix"] = c.get("--prefix");
        result = api.call("POST", base, body);
    } else if (verb == "show") {
        result = api.call("GET", one);
    } else if (verb == "delete") {
        api.call("DELETE", one);
        if (as_json)
            print_json({{"deleted", "snapshot"}, {"bucket", p[2]}, {"snapshot", p[3]}});
        else
            std::cout << "deleted snapshot " << p[3] << " of " << p[2] << "\n";
        return 0;
    } else if (verb == "restore") {
        boost::json::object body;
        for (auto [flag, field] :
             {std::pair{"--target-bucket", "target_bucket"}, std::pair{"--target-prefix", "target_prefix"},
              std::pair{"--prefix", "prefix"}})
            if (c.has(flag))
                body[field] = c.get(flag);
        result = api.call("POST", one + "/restore", body);
        if (!as_json) {
            std::cout << "restored " << str(result, "objects") << " objects ("
                      << human_bytes(number(result, "logical_bytes")) << ", no bytes copied) into s3://"
                      << str(result, "target_bucket") << "/" << c.get("--target-prefix") << "\n";
            return 0;
        }
    } else {
        throw failure("unknown snapshot command '" + verb + "'", 2);
    }
    if (as_json)
        print_json(result);
    else
        print(result);
    return 0;
}

} // namespace depot::ctl
