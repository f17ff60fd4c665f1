// depotctl warmup start|list|show: cache warm-ups of model versions through the REST API.
#include "remote_common.hpp"

#include <algorithm>
#include <iostream>
#include <thread>

namespace depot::ctl {

namespace {

void print_warmup(const json& w)
{
    std::cout << str(w, "id") << "\t" << str(w, "state") << "\tversion " << str(w, "version");
    if (!str(w, "alias").empty())
        std::cout << " (" << str(w, "alias") << ")";
    std::cout << "\t" << str(w, "trigger") << "\t" << str(w, "percent") << " %\t" << str(w, "created_at")
              << "\n";
}

void print_warmup_progress(const json& w)
{
    print_warmup(w);
    for (const auto& p : items(w, "progress"))
        std::cout << "  " << str(p, "instance") << "\t" << str(p, "state") << "\t" << str(p, "files_done")
                  << "/" << str(p, "files_total") << " files\t" << human_bytes(number(p, "bytes_done"))
                  << " of " << human_bytes(number(p, "bytes_total")) << "\t" << str(p, "percent") << " %\t"
                  << str(p, "errors") << " errors"
                  << (str(p, "last_error").empty() ? std::string() : "\t" + str(p, "last_error")) << "\n";
}

} // namespace

int warmup_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    const bool as_json = c.has("--json");
    if (p.size() < 3)
        throw failure("usage: depotctl warmup start|list|show TEAM/MODEL[:VERSION] ...", 2);
    api_client api(ep);
    const auto& verb = p[1];
    json result;
    if (verb == "start") {
        auto m = parse_model_ref(p[2], true);
        if (c.has("--alias") && !m.ref.empty())
            throw failure("give either TEAM/MODEL:VERSION or --alias, not both", 2);
        boost::json::object body;
        if (!m.ref.empty())
            body["version"] = m.ref;
        else
            body["alias"] = c.has("--alias") ? c.get("--alias") : std::string("latest");
        result = api.call("POST", m.base() + "/warmups", body);
        if (c.has("--wait")) {
            const std::string one = m.base() + "/warmups/" + str(result, "id");
            while (str(result, "state") == "running") {
                std::this_thread::sleep_for(std::chrono::milliseconds(500));
                result = api.call("GET", one);
            }
        }
    } else if (verb == "list") {
        auto m = parse_model_ref(p[2], false);
        auto items = api.all(m.base() + "/warmups");
        if (as_json)
            print_json(items);
        else
            for (const auto& w : items)
                print_warmup(w);
        return 0;
    } else if (verb == "show") {
        auto m = parse_model_ref(p[2], false);
        if (p.size() < 4)
            throw failure("usage: depotctl warmup show TEAM/MODEL ID", 2);
        result = api.call("GET", m.base() + "/warmups/" + seg(p[3]));
    } else {
        throw failure("unknown warmup command '" + verb + "'", 2);
    }
    if (as_json)
        print_json(result);
    else
        print_warmup_progress(result);
    if (verb == "start" && c.has("--wait") && str(result, "state") != "completed")
        return 1;
    return 0;
}

} // namespace depot::ctl
