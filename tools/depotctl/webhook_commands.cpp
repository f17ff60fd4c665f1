// depotctl webhook ...: a team's webhook subscriptions and deliveries through the REST API.
#include "remote_common.hpp"

#include <algorithm>
#include <iostream>

namespace depot::ctl {

namespace {

void print_webhook(const json& w)
{
    std::cout << str(w, "id") << "\t" << (flag(w, "enabled") ? "enabled" : "DISABLED") << "\t"
              << str(w, "url");
    if (!items(w, "event_types").empty()) {
        std::cout << "\tevents:";
        for (const auto& t : items(w, "event_types"))
            std::cout << " " << std::string(t.as_string());
    } else {
        std::cout << "\tevents: all";
    }
    if (!str(w, "model").empty())
        std::cout << "\tmodel " << str(w, "model");
    if (!str(w, "bucket").empty())
        std::cout << "\tbucket " << str(w, "bucket");
    if (!str(w, "disabled_reason").empty())
        std::cout << "\t(" << str(w, "disabled_reason") << ")";
    std::cout << "\n";
}

} // namespace

int webhook_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    const bool as_json = c.has("--json");
    if (p.size() < 3)
        throw failure("usage: depotctl webhook create|list|show|update|enable|disable|delete|rotate|ping|"
                      "deliveries|redeliver TEAM ...",
                      2);
    api_client api(ep);
    const auto& verb = p[1];
    const std::string base = "/api/v1/teams/" + seg(p[2]) + "/webhooks";
    auto need = [&](std::size_t n, const char* what) {
        if (p.size() < n)
            throw failure(std::string("usage: depotctl webhook ") + verb + " " + what, 2);
    };
    if (verb == "list") {
        auto items = api.all(base);
        if (as_json)
            print_json(items);
        else
            for (const auto& w : items)
                print_webhook(w);
        return 0;
    }
    if (verb == "create") {
        need(4, "TEAM URL [--events T1,T2] [--model M] [--bucket B] [--description D]");
        boost::json::object body{{"url", p[3]}};
        if (c.has("--events"))
            body["event_types"] = comma_list(c.get("--events"));
        for (auto [flag, field] : {std::pair{"--model", "model"}, std::pair{"--bucket", "bucket"},
                                   std::pair{"--description", "description"}})
            if (c.has(flag))
                body[field] = c.get(flag);
        auto w = api.call("POST", base, body);
        if (as_json) {
            print_json(w);
        } else {
            print_webhook(w);
            std::cout << "secret: " << str(w, "secret") << "  (shown once; verify signatures with it)\n";
        }
        return 0;
    }
    need(4, "TEAM ID");
    const std::string one = base + "/" + seg(p[3]);
    json result;
    if (verb == "show") {
        result = api.call("GET", one);
    } else if (verb == "update" || verb == "enable" || verb == "disable") {
        boost::json::object body;
        if (verb != "update")
            body["enabled"] = verb == "enable";
        if (c.has("--url"))
            body["url"] = c.get("--url");
        if (c.has("--events"))
            body["event_types"] = comma_list(c.get("--events"));
        if (c.has("--description"))
            body["description"] = c.get("--description");
        result = api.call("PATCH", one, body);
    } else if (verb == "delete") {
        api.call("DELETE", one);
        if (as_json)
            print_json({{"deleted", "webhook"}, {"team", p[2]}, {"id", p[3]}});
        else
            std::cout << "deleted webhook " << p[3] << "\n";
        return 0;
    } else if (verb == "rotate") {
        boost::json::object body;
        if (c.has("--overlap")) {
            try {
                body["overlap_seconds"] = std::stol(c.get("--overlap"));
            } catch (const std::exception&) {
                throw failure("--overlap needs a number of seconds", 2);
            }
        }
        result = api.call("POST", one + "/rotate", body);
        if (!as_json) {
            print_webhook(result);
            std::cout << "secret: " << str(result, "secret") << "  (the previous one also signs until "
                      << (str(result, "previous_secret_expires_at").empty()
                              ? std::string("now: not at all")
                              : str(result, "previous_secret_expires_at"))
                      << ")\n";
            return 0;
        }
    } else if (verb == "ping") {
        result = api.call("POST", one + "/ping", boost::json::object());
        if (!as_json) {
            std::cout << "queued " << str(result, "event_type") << " " << str(result, "event_id") << "\n";
            return 0;
        }
    } else if (verb == "deliveries" && p.size() >= 5) {
        result = api.call("GET", one + "/deliveries/" + seg(p[4]));
        if (!as_json) {
            std::cout << str(result, "id") << "\t" << str(result, "event_type") << "\t"
                      << str(result, "event_id") << "\t" << str(result, "state") << "\n";
            for (const auto& a : items(result, "attempt_log"))
                std::cout << "  attempt " << str(a, "number") << "  " << str(a, "started_at") << "  "
                          << (str(a, "status").empty() ? std::string("-") : str(a, "status")) << "  "
                          << str(a, "latency_ms") << " ms  " << str(a, "instance") << "  " << str(a, "error")
                          << "\n";
            return 0;
        }
    } else if (verb == "deliveries") {
        auto items =
            api.all(one + "/deliveries" + (c.has("--state") ? "?state=" + seg(c.get("--state")) : ""));
        if (as_json) {
            print_json(items);
        } else {
            for (const auto& d : items)
                std::cout << str(d, "id") << "\t" << str(d, "event_type") << "\t" << str(d, "event_id")
                          << "\t" << str(d, "state") << "\t" << str(d, "attempts") << " attempts\t"
                          << str(d, "last_status") << "\t" << str(d, "last_error") << "\n";
        }
        return 0;
    } else if (verb == "redeliver") {
        need(5, "TEAM ID DELIVERY");
        result = api.call("POST", one + "/deliveries/" + seg(p[4]) + "/redeliver", boost::json::object());
        if (!as_json) {
            std::cout << "queued delivery " << str(result, "id") << " (" << str(result, "event_type")
                      << ")\n";
            return 0;
        }
    } else {
        throw failure("unknown webhook command '" + verb + "'", 2);
    }
    if (as_json)
        print_json(result);
    else
        print_webhook(result);
    return 0;
}

} // namespace depot::ctl
