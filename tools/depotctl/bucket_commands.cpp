// depotctl bucket show|set: a bucket's settings (content deduplication, object events) through the REST API.
#include "remote_common.hpp"

#include <iostream>

namespace depot::ctl {
namespace {

bool on_off(const cli& c, const char* flag)
{
    const auto v = c.get(flag);
    if (v == "on" || v == "true" || v == "yes")
        return true;
    if (v == "off" || v == "false" || v == "no")
        return false;
    throw failure(std::string(flag) + " needs on or off", 2);
}

} // namespace

int bucket_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    if (p.size() < 3)
        throw failure("usage: depotctl bucket " + p[1] + " BUCKET", 2);
    api_client api(ep);
    const std::string one = "/api/v1/buckets/" + seg(p[2]);
    json b;
    if (p[1] == "set") {
        boost::json::object body;
        if (c.has("--dedup"))
            body["dedup"] = on_off(c, "--dedup");
        if (c.has("--object-events"))
            body["object_events"] = on_off(c, "--object-events");
        if (body.empty())
            throw failure("bucket set needs --dedup or --object-events", 2);
        b = api.call("PATCH", one, body);
    } else {
        b = api.call("GET", one);
    }
    if (c.has("--json")) {
        print_json(b);
        return 0;
    }
    std::cout << str(b, "name") << "  owner " << str(b, "owner") << "  dedup "
              << (flag(b, "dedup") ? "on" : "off") << "  object events "
              << (flag(b, "object_events") ? "on" : "off") << "\n";
    return 0;
}

} // namespace depot::ctl
