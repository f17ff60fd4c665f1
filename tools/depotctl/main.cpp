// depotctl: administration of a Depot installation. The database commands (migrate, fsck, gc, audit, and
// user/key/token when a database URL is set) talk to PostgreSQL directly with the same settings and server
// key as depotd, so they work before any depotd is running; everything else goes through depotd's REST and
// S3 APIs (remote.cpp). The command line is parsed from one table (command_line.cpp).
#include "audit_commands.hpp"
#include "cli.hpp"
#include "command_line.hpp"
#include "common/http_date.hpp"
#include "common/json.hpp"
#include "common/secret_box.hpp"
#include "config/blob_store_factory.hpp"
#include "config/options.hpp"
#include "registry/pg/migrations.hpp"
#include "registry/pg/pg.hpp"
#include "registry/service/blob_collector.hpp"
#include "registry/service/credentials.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <sys/stat.h>

namespace asio = boost::asio;
using namespace depot;
using ctl::cli;
using ctl::env_or;
using ctl::failure;

namespace {

/// The scope the SCOPE flags ask for, as canonical JSON ("" = none).
std::string scope_of(const cli& c)
{
    boost::json::object j;
    if (c.has("--read-only"))
        j["read_only"] = true;
    for (const char* f : {"--bucket", "--prefix", "--model", "--alias"})
        if (c.has(f))
            j[std::string(f + 2)] = c.get(f);
    if (j.empty())
        return {};
    auto parsed = registry::parse_scope(boost::json::serialize(j));
    if (!parsed)
        throw failure(parsed.error().message, 2);
    return registry::scope_json(*parsed);
}

std::optional<registry::time_point> expiry_of(const cli& c)
{
    auto seconds = expires_in_seconds(c);
    if (!seconds)
        return std::nullopt;
    return std::chrono::system_clock::now() + std::chrono::seconds(*seconds);
}

bool parse_seconds(const std::string& text, long& out)
{
    try {
        std::size_t used = 0;
        out = std::stol(text, &used);
        return used == text.size() && out >= 0;
    } catch (const std::exception&) {
        return false;
    }
}

/// The settings depotd would run with given these flags, the DEPOT_* environment and the --config file
/// (DEPOT_CONFIG): the database, the server key and the blob store are resolved exactly as depotd does.
config::options depotd_options(const cli& c)
{
    static const char* const shared[] = {"--config",     "--database-url",    "--server-key-file",
                                         "--server-key", "--storage",         "--blob-dir",
                                         "--rados-conf", "--rados-user",      "--rados-keyring",
                                         "--rados-pool", "--rados-namespace", "--rados-op-timeout"};
    std::vector<std::string> args;
    for (const char* f : shared)
        if (c.has(f)) {
            args.push_back(f);
            args.push_back(c.get(f));
        }
    // depotd refuses to run without a database; depotctl then talks to depotd instead. A placeholder URL
    // (flags win over variables and the file) tells the other errors from that one.
    auto with_placeholder = args;
    with_placeholder.insert(with_placeholder.end(), {"--database-url", "unset"});
    bool help = false;
    auto opts = config::parse_options(with_placeholder, help);
    if (!opts)
        throw failure(opts.error().message, 2);
    auto real = config::parse_options(args, help);
    opts->database_url = real ? real->database_url : std::string();
    return std::move(*opts);
}

/// The blob store depotd would use.
std::shared_ptr<storage::blob_store> blob_store_of(const cli& c)
{
    return config::make_blob_store(depotd_options(c));
}

/// Timestamps as the REST API writes them (what the remote commands print), "2009-10-12T17:50:30.000Z".
std::string format_time(registry::time_point t)
{
    return format_iso8601(t);
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
            throw failure("missing argument (see depotctl " + p[0] + " -h)", 2);
    };
    need(1);
    // The same credential service as the REST API: the same validation, the same audit rows.
    registry::credential_service credentials(*pool, server_key);
    // The audit rows of what depotctl changes name it as the actor.
    const registry::audit_context audit{
        .actor = "depotctl", .credential = {}, .request_id = {}, .client_addr = {}};

    if (p[0] == "audit") {
        co_await ctl::run_audit(c, pool, [&] { return blob_store_of(c); });
        co_return;
    }

    if (p[0] == "migrate") {
        auto conn = co_await pool->acquire();
        auto status = co_await pg::migrate(*conn);
        if (json)
            std::cout << boost::json::serialize(boost::json::object{{"version", status.current}}) << "\n";
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
            auto u = co_await credentials.create_user(audit, std::move(wanted));
            if (!u)
                throw failure(u.error().message);
            if (json)
                std::cout << boost::json::serialize(boost::json::object{
                                 {"id", u->id}, {"display_name", u->display_name}, {"admin", u->is_admin}})
                          << "\n";
            else
                std::cout << "created user " << u->id << "\n";
            co_return;
        }
        if (p[1] == "list") {
            auto users = co_await credentials.list_users();
            auto arr = boost::json::array();
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
                std::cout << boost::json::serialize(arr) << "\n";
            co_return;
        }
    }
    if (p[0] == "key") {
        need(2);
        if (p[1] == "create") {
            need(3);
            if (c.has("--access-key") != c.has("--secret"))
                throw failure("--access-key and --secret go together", 2);
            const std::string scope = scope_of(c);
            const auto expires = expiry_of(c);
            auto k = co_await credentials.create_key(audit, p[2], c.get("--access-key"), c.get("--secret"),
                                                     scope, expires);
            if (!k)
                throw failure(k.error().message);
            if (c.has("--credentials-file"))
                write_credentials(c.get("--credentials-file"), c.get("--profile", "default"), *k);
            if (json)
                std::cout << boost::json::serialize(boost::json::object{
                                 {"access_key_id", k->access_key_id},
                                 {"secret_access_key", k->secret},
                                 {"user_id", k->user_id},
                                 {"scope", scope.empty() ? boost::json::value() : boost::json::parse(scope)}})
                          << "\n";
            else
                std::cout << "access_key_id: " << k->access_key_id << "\nsecret_access_key: " << k->secret
                          << "\n";
            co_return;
        }
        if (p[1] == "list") {
            need(3);
            auto keys = co_await credentials.list_keys(p[2]);
            auto arr = boost::json::array();
            for (const auto& k : keys) {
                std::string state = k.revoked_at ? "revoked" : "active";
                if (json)
                    arr.push_back(
                        {{"access_key_id", k.access_key_id},
                         {"created_at", format_time(k.created_at)},
                         {"state", state},
                         {"scope", k.scope.empty() ? boost::json::value() : boost::json::parse(k.scope)}});
                else
                    std::cout << k.access_key_id << "\t" << format_time(k.created_at) << "\t" << state
                              << "\n";
            }
            if (json)
                std::cout << boost::json::serialize(arr) << "\n";
            co_return;
        }
        if (p[1] == "revoke") {
            need(3);
            auto r = co_await credentials.revoke_key(audit, p[2]);
            if (!r)
                throw failure(r.error().message);
            if (json)
                std::cout << boost::json::serialize(
                                 boost::json::object{{"revoked", "key"}, {"access_key_id", p[2]}})
                          << "\n";
            else
                std::cout << "revoked " << p[2] << "\n";
            co_return;
        }
    }
    if (p[0] == "fsck" || p[0] == "gc") {
        auto store = blob_store_of(c);
        if (p[0] == "gc") {
            long grace = 3600;
            if (c.has("--grace") && !parse_seconds(c.get("--grace"), grace))
                throw failure("--grace needs a number of seconds", 2);
            const auto cutoff = std::chrono::system_clock::now() - std::chrono::seconds(grace);
            const bool dry = c.has("--dry-run");
            auto r = co_await registry::collect_unreachable_blobs(*pool, *store, cutoff, dry);
            if (json)
                std::cout << boost::json::serialize(
                                 boost::json::object{{"dry_run", dry},
                                                     {"blobs_scanned", r.scanned},
                                                     {"unreferenced_blobs", r.orphans},
                                                     {"unreferenced_bytes", r.orphan_bytes},
                                                     {"incomplete_writes", r.incomplete}})
                          << "\n";
            else
                std::cout << (dry ? "would remove " : "removed ") << r.orphans << " unreferenced blobs ("
                          << r.orphan_bytes << " bytes) of " << r.scanned << " scanned"
                          << (dry ? "" : ", and " + std::to_string(r.incomplete) + " incomplete writes")
                          << "\n";
            co_return;
        }
        auto r = co_await registry::check_consistency(*pool, *store);
        std::size_t repaired = 0;
        if (c.has("--repair") && !r.refcount_mismatches.empty()) {
            repaired = co_await registry::repair_refcounts(*pool, *store);
            r = co_await registry::check_consistency(*pool, *store);
        }
        if (json) {
            auto orphans = boost::json::array();
            for (const auto& [id, size] : r.orphans)
                orphans.push_back({{"blob", id}, {"size", size}});
            auto refcounts = boost::json::array();
            for (const auto& [row, recorded, actual] : r.refcount_mismatches)
                refcounts.push_back({{"row", row}, {"recorded", recorded}, {"actual", actual}});
            std::cout << boost::json::serialize(boost::json::object{
                             {"store_blobs", r.store_blobs},
                             {"registry_blobs", r.registry_blobs},
                             {"missing", boost::json::value_from(r.missing)},
                             {"orphans", orphans},
                             {"size_mismatches", boost::json::value_from(r.size_mismatches)},
                             {"refcount_mismatches", refcounts},
                             {"refcounts_repaired", repaired},
                             {"clean", r.clean()}})
                      << "\n";
        } else {
            std::cout << r.store_blobs << " blobs in the store, " << r.registry_blobs << " in the registry\n";
            for (const auto& id : r.missing)
                std::cout << "MISSING   " << id << " (the registry names it; the store has lost it)\n";
            for (const auto& [id, size] : r.orphans)
                std::cout << "ORPHAN    " << id << " (" << size << " bytes; `depotctl gc` reclaims it)\n";
            for (const auto& id : r.size_mismatches)
                std::cout << "SIZE      " << id << " (stored size differs from the registry's)\n";
            for (const auto& [row, recorded, actual] : r.refcount_mismatches)
                std::cout << "REFCOUNT  row " << row << ": recorded " << recorded << ", actual " << actual
                          << " (--repair fixes it)\n";
            if (repaired)
                std::cout << "repaired " << repaired << " refcounts\n";
            std::cout << (r.clean() ? "consistent\n" : "INCONSISTENT\n");
        }
        if (!r.clean())
            throw failure("the registry and the blob store disagree", 1);
        co_return;
    }
    if (p[0] == "token") {
        need(2);
        if (p[1] == "create") {
            need(3);
            const auto expires = expiry_of(c);
            const std::string scope = scope_of(c);
            auto t = co_await credentials.create_token(audit, p[2], c.get("--name"), expires, scope);
            if (!t)
                throw failure(t.error().message);
            if (json)
                std::cout << boost::json::serialize(boost::json::object{
                                 {"id", t->id}, {"token", t->token}, {"user_id", t->user_id}})
                          << "\n";
            else
                std::cout << "id: " << t->id << "\ntoken: " << t->token
                          << "\n(the token is shown only now; store it safely)\n";
            co_return;
        }
        if (p[1] == "list") {
            need(3);
            auto list = co_await credentials.list_tokens(p[2]);
            auto arr = boost::json::array();
            for (const auto& t : list) {
                std::string state = t.revoked_at ? "revoked"
                                    : t.expires_at && *t.expires_at <= std::chrono::system_clock::now()
                                        ? "expired"
                                        : "active";
                if (json)
                    arr.push_back({{"id", t.id},
                                   {"name", t.name},
                                   {"created_at", format_time(t.created_at)},
                                   {"expires_at", t.expires_at ? format_time(*t.expires_at) : std::string()},
                                   {"state", state}});
                else
                    std::cout << t.id << "\t" << t.name << "\t" << format_time(t.created_at) << "\t" << state
                              << "\n";
            }
            if (json)
                std::cout << boost::json::serialize(arr) << "\n";
            co_return;
        }
        if (p[1] == "revoke") {
            need(3);
            auto r = co_await credentials.revoke_token(audit, p[2]);
            if (!r)
                throw failure(r.error().message);
            if (json)
                std::cout << boost::json::serialize(boost::json::object{{"revoked", "token"}, {"id", p[2]}})
                          << "\n";
            else
                std::cout << "revoked " << p[2] << "\n";
            co_return;
        }
    }
    throw failure("unknown command '" + p[0] + (p.size() > 1 ? " " + p[1] : "") + "' (see depotctl -h)", 2);
}

/// The server key depotd uses: --server-key / DEPOT_SERVER_KEY, else the key file, resolved as depotd
/// resolves it (--server-key-file, DEPOT_SERVER_KEY_FILE, server-key-file in --config, ./var/server.key,
/// relative to the working directory). Never creates one: keys sealed under a fresh key would fail later.
std::string server_key_of(const config::options& o)
{
    if (!o.server_key_hex.empty()) {
        auto k = secret_box::parse_server_key(o.server_key_hex);
        if (!k)
            throw failure("the server key: " + k.error().message, 2);
        return std::move(*k);
    }
    const std::filesystem::path file = o.server_key_file;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec))
        throw failure(
            "the server key file " + std::filesystem::absolute(file, ec).lexically_normal().string() +
                " does not exist: point --server-key-file (DEPOT_SERVER_KEY_FILE) at the file depotd "
                "uses, or set DEPOT_SERVER_KEY; depotctl never creates a server key",
            2);
    return secret_box::load_or_create_server_key(file);
}

} // namespace

int main(int argc, char** argv)
{
    cli c;
    if (auto handled = ctl::parse_command_line(std::vector<std::string>(argv + 1, argv + argc), c))
        return *handled;
    const auto& cmd = c.positional[0];
    if (cmd == "completion") {
        auto script = ctl::completion_script(c.positional.size() > 1 ? c.positional[1] : "");
        if (script.empty()) {
            std::fprintf(stderr, "depotctl: completion needs bash or zsh\n");
            return 2;
        }
        std::fputs(script.c_str(), stdout);
        return 0;
    }
    auto remote = [&] {
        try {
            return ctl::run_remote(c);
        } catch (const failure& f) {
            std::fprintf(stderr, "depotctl: %s\n", f.what());
            return f.code;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "depotctl: %s\n", e.what());
            return 1;
        }
    };
    if (ctl::is_remote_command(c))
        return remote();
    config::options depotd;
    try {
        depotd = depotd_options(c);
    } catch (const failure& f) {
        std::fprintf(stderr, "depotctl: %s\n", f.what());
        return f.code;
    }
    const std::string url = depotd.database_url;
    // user, key and token go through the REST API when there is no database to write (or with --remote).
    if ((cmd == "user" || cmd == "key" || cmd == "token") && (url.empty() || c.has("--remote")))
        return remote();
    if (url.empty()) {
        std::fprintf(stderr, "depotctl: %s needs the database: set --database-url or DEPOT_DATABASE_URL\n",
                     cmd.c_str());
        return 2;
    }
    int rc = 0;
    try {
        // Only access keys are sealed with the server key: migrate, fsck, gc, audit, user and token run
        // without one (a fresh installation migrates before its first depotd made the key).
        const std::string key = cmd == "key" ? server_key_of(depotd) : std::string();
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
