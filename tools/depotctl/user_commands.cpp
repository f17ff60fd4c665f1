// depotctl user create|list, key create|list|revoke and token create|list|revoke through the REST API: what
// an installation admin does without access to the database (with one, main.cpp writes it directly).
#include "remote_common.hpp"

#include <iostream>

namespace depot::ctl {
namespace {

/// POST body of a key or token for `user` with the SCOPE and --expires-in flags.
boost::json::object credential_body(const cli& c, const std::string& user)
{
    boost::json::object body{{"user", user}};
    if (auto scope = scope_body(c); !scope.is_null())
        body["scope"] = scope;
    if (auto expires = expires_in_body(c); !expires.is_null())
        body["expires_in"] = expires;
    return body;
}

std::string state_of(const json& credential)
{
    return str(credential, "revoked_at").empty() ? "active" : "revoked";
}

void need(const cli& c, std::size_t n, const char* usage)
{
    if (c.positional.size() < n)
        throw failure(std::string("usage: depotctl ") + usage, 2);
}

} // namespace

int user_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    const bool as_json = c.has("--json");
    api_client api(ep);
    if (p[1] == "list") {
        auto items = api.all("/api/v1/users");
        if (as_json)
            print_json(items);
        else
            for (const auto& u : items)
                std::cout << str(u, "id") << "\t" << str(u, "display_name") << "\t"
                          << (flag(u, "admin") ? "admin" : "") << "\n";
        return 0;
    }
    need(c, 3, "user create ID [--display-name N] [--email E] [--admin]");
    boost::json::object body{{"id", p[2]}, {"admin", c.has("--admin")}};
    if (c.has("--display-name"))
        body["display_name"] = c.get("--display-name");
    if (c.has("--email"))
        body["email"] = c.get("--email");
    auto u = api.call("POST", "/api/v1/users", body);
    if (as_json)
        print_json(u);
    else
        std::cout << "created user " << str(u, "id") << "\n";
    return 0;
}

int key_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    const bool as_json = c.has("--json");
    api_client api(ep);
    if (p[1] == "create") {
        need(c, 3, "key create USER_ID [SCOPE] [--expires-in SECONDS]");
        if (c.has("--secret") || c.has("--credentials-file"))
            throw failure("--secret and --credentials-file need the database (--database-url); through the "
                          "REST API the server chooses the key",
                          2);
        auto k = api.call("POST", "/api/v1/keys", credential_body(c, p[2]));
        if (as_json)
            print_json(k);
        else
            std::cout << "access_key_id: " << str(k, "access_key_id")
                      << "\nsecret_access_key: " << str(k, "secret_access_key") << "\n";
        return 0;
    }
    if (p[1] == "list") {
        need(c, 3, "key list USER_ID");
        auto items = api.all("/api/v1/keys?user=" + seg(p[2]));
        if (as_json)
            print_json(items);
        else
            for (const auto& k : items)
                std::cout << str(k, "access_key_id") << "\t" << str(k, "created_at") << "\t" << state_of(k)
                          << "\n";
        return 0;
    }
    need(c, 3, "key revoke ACCESS_KEY_ID");
    api.call("DELETE", "/api/v1/keys/" + seg(p[2]));
    if (as_json)
        print_json({{"revoked", "key"}, {"access_key_id", p[2]}});
    else
        std::cout << "revoked " << p[2] << "\n";
    return 0;
}

int token_command(const cli& c, const endpoint& ep)
{
    const auto& p = c.positional;
    const bool as_json = c.has("--json");
    api_client api(ep);
    if (p[1] == "create") {
        need(c, 3, "token create USER_ID [--name N] [--expires-in SECONDS] [SCOPE]");
        auto body = credential_body(c, p[2]);
        if (c.has("--name"))
            body["name"] = c.get("--name");
        auto t = api.call("POST", "/api/v1/tokens", body);
        if (as_json)
            print_json(t);
        else
            std::cout << "id: " << str(t, "id") << "\ntoken: " << str(t, "token")
                      << "\n(the token is shown only now; store it safely)\n";
        return 0;
    }
    if (p[1] == "list") {
        need(c, 3, "token list USER_ID");
        auto items = api.all("/api/v1/tokens?user=" + seg(p[2]));
        if (as_json)
            print_json(items);
        else
            for (const auto& t : items)
                std::cout << str(t, "id") << "\t" << str(t, "name") << "\t" << str(t, "created_at") << "\t"
                          << state_of(t) << "\n";
        return 0;
    }
    need(c, 3, "token revoke TOKEN_ID");
    api.call("DELETE", "/api/v1/tokens/" + seg(p[2]));
    if (as_json)
        print_json({{"revoked", "token"}, {"id", p[2]}});
    else
        std::cout << "revoked " << p[2] << "\n";
    return 0;
}

} // namespace depot::ctl
