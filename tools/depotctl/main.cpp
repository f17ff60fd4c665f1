// depotctl: administration of a Depot installation (schema, users, access keys). It talks to PostgreSQL
// directly with the same server key as depotd, so it works before any depotd is running.
#include "common/secret_box.hpp"
#include "registry/identity_repository.hpp"
#include "registry/pg/migrations.hpp"
#include "registry/pg/pg.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/stat.h>

namespace asio = boost::asio;
using namespace depot;

namespace {

constexpr const char* usage = R"(Usage: depotctl [global options] COMMAND [arguments]

Commands:
  migrate                                   apply pending schema migrations
  user create ID [--display-name N] [--email E] [--admin]
  user list
  key create USER_ID [--access-key ID --secret SECRET] [--credentials-file PATH [--profile NAME]]
  key list USER_ID
  key revoke ACCESS_KEY_ID

Global options (or environment):
  --database-url URL        DEPOT_DATABASE_URL
  --server-key-file FILE    DEPOT_SERVER_KEY_FILE (default ./var/server.key)
  --server-key HEX          DEPOT_SERVER_KEY
  --json                    machine-readable output
)";

struct cli
{
    std::vector<std::string> positional;
    std::map<std::string, std::string> flags; ///< "--name" -> value ("" for switches)
    bool has(const std::string& f) const { return flags.count(f) != 0; }
    std::string get(const std::string& f, const std::string& fallback = {}) const
    {
        auto it = flags.find(f);
        return it == flags.end() ? fallback : it->second;
    }
};

const std::vector<std::string> switches = {"--json", "--admin", "--help"};

struct failure : std::runtime_error
{
    int code;
    failure(std::string m, int c = 1) : std::runtime_error(std::move(m)), code(c) {}
};

std::string env_or(const char* name, const std::string& fallback)
{
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : fallback;
}

std::string format_time(registry::time_point t)
{
    auto secs = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

/// Adds or replaces one profile in an AWS shared-credentials file, keeping the others; mode 0600.
void write_credentials(const std::filesystem::path& path, const std::string& profile,
                       const registry::access_key& k)
{
    std::vector<std::string> kept;
    if (std::ifstream in(path); in) {
        std::string line;
        bool skipping = false;
        while (std::getline(in, line)) {
            if (!line.empty() && line.front() == '[')
                skipping = line == "[" + profile + "]";
            if (!skipping)
                kept.push_back(line);
        }
    }
    if (path.has_parent_path())
        std::filesystem::create_directories(path.parent_path());
    auto tmp = path;
    tmp += ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        if (!out)
            throw failure("cannot write " + tmp.string());
        ::chmod(tmp.c_str(), 0600);
        for (const auto& l : kept)
            out << l << "\n";
        out << "[" << profile << "]\n"
            << "aws_access_key_id = " << k.access_key_id << "\n"
            << "aws_secret_access_key = " << k.secret << "\n";
    }
    std::filesystem::rename(tmp, path);
}

asio::awaitable<void> run_command(const cli& c, std::shared_ptr<pg::pool> pool, std::string server_key)
{
    const auto& p = c.positional;
    const bool json = c.has("--json");
    auto need = [&](std::size_t n) {
        if (p.size() < n)
            throw failure(std::string("missing argument\n\n") + usage, 2);
    };
    need(1);
    registry::identity_repository ids(*pool, server_key);

    if (p[0] == "migrate") {
        auto conn = co_await pool->acquire();
        auto status = co_await pg::migrate(*conn);
        if (json)
            std::cout << nlohmann::json{{"version", status.current}}.dump() << "\n";
        else
            std::cout << "schema at version " << status.current << "\n";
        co_return;
    }
    if (p[0] == "user") {
        need(2);
        if (p[1] == "create") {
            need(3);
            registry::user wanted{.id = p[2],
                                  .display_name = c.get("--display-name"),
                                  .email = c.get("--email"),
                                  .is_admin = c.has("--admin")};
            auto u = co_await ids.create_user(std::move(wanted));
            if (!u)
                throw failure(u.error().message);
            if (json)
                std::cout << nlohmann::json{{"id", u->id},
                                            {"display_name", u->display_name},
                                            {"admin", u->is_admin}}
                                 .dump()
                          << "\n";
            else
                std::cout << "created user " << u->id << "\n";
            co_return;
        }
        if (p[1] == "list") {
            auto users = co_await ids.list_users();
            auto arr = nlohmann::json::array();
            for (const auto& u : users) {
                if (json)
                    arr.push_back({{"id", u.id},
                                   {"display_name", u.display_name},
                                   {"email", u.email},
                                   {"admin", u.is_admin},
                                   {"created_at", format_time(u.created_at)}});
                else
                    std::cout << u.id << "\t" << u.display_name << "\t" << (u.is_admin ? "admin" : "")
                              << "\n";
            }
            if (json)
                std::cout << arr.dump() << "\n";
            co_return;
        }
    }
    if (p[0] == "key") {
        need(2);
        if (p[1] == "create") {
            need(3);
            if (c.has("--access-key") != c.has("--secret"))
                throw failure("--access-key and --secret go together", 2);
            auto k = co_await ids.create_key(p[2], c.get("--access-key"), c.get("--secret"));
            if (!k)
                throw failure(k.error().message);
            if (c.has("--credentials-file"))
                write_credentials(c.get("--credentials-file"), c.get("--profile", "default"), *k);
            if (json)
                std::cout << nlohmann::json{{"access_key_id", k->access_key_id},
                                            {"secret_access_key", k->secret},
                                            {"user_id", k->user_id}}
                                 .dump()
                          << "\n";
            else
                std::cout << "access_key_id: " << k->access_key_id << "\nsecret_access_key: " << k->secret
                          << "\n";
            co_return;
        }
        if (p[1] == "list") {
            need(3);
            auto keys = co_await ids.list_keys(p[2]);
            auto arr = nlohmann::json::array();
            for (const auto& k : keys) {
                std::string state = k.revoked_at ? "revoked" : "active";
                if (json)
                    arr.push_back({{"access_key_id", k.access_key_id},
                                   {"created_at", format_time(k.created_at)},
                                   {"state", state}});
                else
                    std::cout << k.access_key_id << "\t" << format_time(k.created_at) << "\t" << state
                              << "\n";
            }
            if (json)
                std::cout << arr.dump() << "\n";
            co_return;
        }
        if (p[1] == "revoke") {
            need(3);
            auto r = co_await ids.revoke_key(p[2]);
            if (!r)
                throw failure(r.error().message);
            if (!json)
                std::cout << "revoked " << p[2] << "\n";
            co_return;
        }
    }
    throw failure("unknown command '" + p[0] + (p.size() > 1 ? " " + p[1] : "") + "'\n\n" + usage, 2);
}

} // namespace

int main(int argc, char** argv)
{
    cli c;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a.rfind("--", 0) == 0) {
            auto eq = a.find('=');
            if (eq != std::string::npos)
                c.flags[a.substr(0, eq)] = a.substr(eq + 1);
            else if (std::find(switches.begin(), switches.end(), a) != switches.end())
                c.flags[a] = "";
            else if (i + 1 < argc)
                c.flags[a] = argv[++i];
            else {
                std::fprintf(stderr, "depotctl: %s needs a value\n", a.c_str());
                return 2;
            }
        } else {
            c.positional.push_back(a);
        }
    }
    if (c.has("--help") || c.positional.empty()) {
        std::fputs(usage, c.positional.empty() && !c.has("--help") ? stderr : stdout);
        return c.has("--help") ? 0 : 2;
    }
    auto url = c.get("--database-url", env_or("DEPOT_DATABASE_URL", ""));
    if (url.empty()) {
        std::fprintf(stderr, "depotctl: set --database-url or DEPOT_DATABASE_URL\n");
        return 2;
    }
    int rc = 0;
    try {
        std::string key;
        auto hex = c.get("--server-key", env_or("DEPOT_SERVER_KEY", ""));
        if (!hex.empty()) {
            auto k = secret_box::parse_server_key(hex);
            if (!k)
                throw failure("DEPOT_SERVER_KEY: " + k.error().message, 2);
            key = std::move(*k);
        } else {
            key = secret_box::load_or_create_server_key(
                c.get("--server-key-file", env_or("DEPOT_SERVER_KEY_FILE", "./var/server.key")));
        }
        asio::io_context ioc;
        auto pool = pg::make_pool(ioc.get_executor(), {.conninfo = url, .max_connections = 2});
        std::exception_ptr error;
        asio::co_spawn(ioc, run_command(c, pool, key), [&](std::exception_ptr e) { error = e; });
        ioc.run();
        if (error)
            std::rethrow_exception(error);
    } catch (const failure& f) {
        std::fprintf(stderr, "depotctl: %s\n", f.what());
        rc = f.code;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "depotctl: %s\n", e.what());
        rc = 1;
    }
    return rc;
}
