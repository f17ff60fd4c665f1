// depotctl: administration of a Depot installation (schema, users, access keys). It talks to PostgreSQL
// directly with the same server key as depotd, so it works before any depotd is running.
#include "audit_commands.hpp"
#include "cli.hpp"
#include "common/secret_box.hpp"
#include "registry/audit.hpp"
#include "registry/blob_collector.hpp"
#include "registry/credential_scope.hpp"
#include "registry/identity_repository.hpp"
#include "registry/pg/migrations.hpp"
#include "registry/pg/pg.hpp"
#include "registry/token_repository.hpp"
#include "server/blob_store_factory.hpp"
#include "server/options.hpp"

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
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/stat.h>

namespace asio = boost::asio;
using namespace depot;
using ctl::cli;
using ctl::env_or;
using ctl::failure;

namespace {

constexpr const char* usage = R"(Usage: depotctl [global options] COMMAND [arguments]

Commands:
  migrate                                   apply pending schema migrations
  user create ID [--display-name N] [--email E] [--admin]
  user list
  key create USER_ID [--access-key ID --secret SECRET] [--credentials-file PATH [--profile NAME]]
             [SCOPE] [--expires-in SECONDS]
  key list USER_ID
  key revoke ACCESS_KEY_ID
  fsck [--repair] [STORAGE]                 cross-check registry and blob store (exit 1 if they disagree);
                                            --repair recomputes reference counts
  gc [--dry-run] [--grace SECONDS] [STORAGE] reclaim blobs nothing references (older than --grace, 3600)
  token create USER_ID [--name N] [--expires-in SECONDS] [SCOPE]   an API token for the REST API (shown once)
  token list USER_ID
  token revoke TOKEN_ID
  audit verify                              recompute the audit log's hash chain (exit 1 naming the first
                                            row that does not hold)
  audit export [--since T] [--until T] [--actor U] [--team T] [--action A] [--resource R] [--output FILE]
                                            the audit log as JSON Lines
  audit archive --before T --bucket B [--key-prefix P] [STORAGE]
                                            move the rows written before T into s3://B/P (default audit/)
                                            audit-FIRST-LAST.jsonl; the rest still verifies

SCOPE (narrows a key or token; never grants): --read-only --bucket B [--prefix P] | --model TEAM/MODEL
      [--alias A] (an alias scope reads only the files of the version the alias points to; implies
      --read-only)

Model registry (through a running depotd; see "Remote options"):
  model create TEAM/MODEL --bucket B [--prefix P] [--description D]
  model list TEAM
  model show TEAM/MODEL
  version create TEAM/MODEL [VERSION FIELDS]  freeze the files under the model's prefix
  version list TEAM/MODEL
  version show TEAM/MODEL[:VERSION] [--files] VERSION: number, label or alias (default latest)
  version diff TEAM/MODEL:VERSION OTHER       added, removed and changed files
  version submit|approve|reject|deprecate|archive TEAM/MODEL:VERSION [--comment C]
  alias set TEAM/MODEL ALIAS VERSION [--if-match ETAG]
  alias delete TEAM/MODEL ALIAS [--if-match ETAG]
  alias list TEAM/MODEL
  snapshot create BUCKET NAME [--prefix P]   an O(1) snapshot, readable at s3://BUCKET/.snapshots/NAME/
  snapshot list BUCKET
  snapshot show|delete BUCKET NAME
  snapshot restore BUCKET NAME [--target-bucket B] [--target-prefix P] [--prefix P]
                                            copy a snapshot's objects back by reference (no bytes move)
  webhook create TEAM URL [--events T1,T2] [--model M] [--bucket B] [--description D]
                                            subscribe URL to the team's events (prints the signing secret)
  webhook list TEAM
  webhook show|delete|ping|enable|disable TEAM ID
  webhook update TEAM ID [--url U] [--events T1,T2] [--description D]
  webhook rotate TEAM ID [--overlap SECONDS] a new secret; the old one also signs for SECONDS (86400)
  webhook deliveries TEAM ID [DELIVERY] [--state pending|delivering|delivered|failed]
                                            deliveries, or one delivery with its attempts
  webhook redeliver TEAM ID DELIVERY        send a delivery again now
  warmup start TEAM/MODEL[:VERSION] [--alias A] [--wait]
                                            preload a version (default: alias latest) into every depotd's
                                            read cache; --wait until it completed (exit 1 if it failed)
  warmup list TEAM/MODEL
  warmup show TEAM/MODEL ID                 a warm-up with its progress per depotd instance
  push DIR TEAM/MODEL [VERSION FIELDS] [--no-version] [--no-delete] [--parallel N]
       [--part-size MiB] [--multipart-threshold MiB]
                                            upload DIR to the model's prefix (contents the server already
                                            has are not sent again; files no longer in DIR are removed from
                                            the prefix unless --no-delete), then create a version
  pull TEAM/MODEL[:VERSION] DIR [--parallel N] [--models-bucket B]
                                            download a version (SHA-256 verified; files already in DIR
                                            with the right content are kept)

VERSION FIELDS: --label L --description D --framework F --format F --parent N --run-url U
                --labels JSON --metrics JSON
                --snapshot NAME (version create: the prefix as a snapshot of the model's bucket saw it)

Remote options (or environment):
  --endpoint URL            DEPOT_ENDPOINT, AWS_ENDPOINT_URL (default http://127.0.0.1:9000)
  --access-key ID --secret-key S   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
  --profile NAME            AWS_PROFILE, in AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials
  --token TOKEN             DEPOT_TOKEN: an API token (REST commands only; push and pull need a key)
  --region R                AWS_REGION (default us-east-1)
  --ca-bundle FILE          AWS_CA_BUNDLE: trusted certificates for https
  --no-progress             no progress bars (they are drawn only on a terminal anyway)

STORAGE: the blob store's depotd flags (--storage, --blob-dir, --rados-conf, --rados-user, --rados-keyring,
--rados-pool, --rados-namespace, --rados-op-timeout) or their DEPOT_* variables, as for depotd.

Global options (or environment):
  --database-url URL        DEPOT_DATABASE_URL
  --server-key-file FILE    DEPOT_SERVER_KEY_FILE (default ./var/server.key)
  --server-key HEX          DEPOT_SERVER_KEY
  --json                    machine-readable output
)";

const std::vector<std::string> switches = {"--json",        "--admin",     "--help",       "--dry-run",
                                           "--repair",      "--files",     "--no-version", "--no-delete",
                                           "--no-progress", "--read-only", "--wait"};

/// The scope the SCOPE flags ask for, as canonical JSON ("" = none).
std::string scope_of(const cli& c)
{
    nlohmann::json j = nlohmann::json::object();
    if (c.has("--read-only"))
        j["read_only"] = true;
    for (const char* f : {"--bucket", "--prefix", "--model", "--alias"})
        if (c.has(f))
            j[std::string(f + 2)] = c.get(f);
    if (j.empty())
        return {};
    auto parsed = registry::parse_scope(j.dump());
    if (!parsed)
        throw failure(parsed.error().message, 2);
    return registry::scope_json(*parsed);
}

std::optional<registry::time_point> expiry_of(const cli& c)
{
    if (!c.has("--expires-in"))
        return std::nullopt;
    long seconds = 0;
    try {
        seconds = std::stol(c.get("--expires-in"));
    } catch (const std::exception&) {
    }
    if (seconds <= 0)
        throw failure("--expires-in needs a positive number of seconds", 2);
    return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
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

/// The blob store depotd would use with these flags and the DEPOT_* environment.
std::shared_ptr<storage::blob_store> blob_store_of(const cli& c)
{
    static const char* const storage_flags[] = {"--storage",         "--blob-dir",        "--rados-conf",
                                                "--rados-user",      "--rados-keyring",   "--rados-pool",
                                                "--rados-namespace", "--rados-op-timeout"};
    std::vector<std::string> args = {"--database-url", "unused-here"};
    for (const char* f : storage_flags)
        if (c.has(f)) {
            args.push_back(f);
            args.push_back(c.get(f));
        }
    bool help = false;
    auto opts = server::parse_options(args, help);
    if (!opts)
        throw failure(opts.error().message, 2);
    return server::make_blob_store(*opts);
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
    // The audit rows of what depotctl changes name it as the actor.
    const auto executor = co_await asio::this_coro::executor;
    const registry::audit_context audit{
        .actor = "depotctl", .credential = {}, .request_id = {}, .client_addr = {}};
    const registry::audit_scope audit_guard(executor, audit);

    if (p[0] == "audit") {
        co_await ctl::run_audit(c, pool, [&] { return blob_store_of(c); });
        co_return;
    }

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
            const std::string scope = scope_of(c);
            const auto expires = expiry_of(c);
            auto k = co_await ids.create_key(p[2], c.get("--access-key"), c.get("--secret"), scope, expires);
            if (!k)
                throw failure(k.error().message);
            if (c.has("--credentials-file"))
                write_credentials(c.get("--credentials-file"), c.get("--profile", "default"), *k);
            if (json)
                std::cout << nlohmann::json{{"access_key_id", k->access_key_id},
                                            {"secret_access_key", k->secret},
                                            {"user_id", k->user_id},
                                            {"scope",
                                             scope.empty() ? nlohmann::json() : nlohmann::json::parse(scope)}}
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
                    arr.push_back(
                        {{"access_key_id", k.access_key_id},
                         {"created_at", format_time(k.created_at)},
                         {"state", state},
                         {"scope", k.scope.empty() ? nlohmann::json() : nlohmann::json::parse(k.scope)}});
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
                std::cout << nlohmann::json{{"dry_run", dry},
                                            {"blobs_scanned", r.scanned},
                                            {"unreferenced_blobs", r.orphans},
                                            {"unreferenced_bytes", r.orphan_bytes},
                                            {"incomplete_writes", r.incomplete}}
                                 .dump()
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
            auto orphans = nlohmann::json::array();
            for (const auto& [id, size] : r.orphans)
                orphans.push_back({{"blob", id}, {"size", size}});
            auto refcounts = nlohmann::json::array();
            for (const auto& [row, recorded, actual] : r.refcount_mismatches)
                refcounts.push_back({{"row", row}, {"recorded", recorded}, {"actual", actual}});
            std::cout << nlohmann::json{{"store_blobs", r.store_blobs},
                                        {"registry_blobs", r.registry_blobs},
                                        {"missing", r.missing},
                                        {"orphans", orphans},
                                        {"size_mismatches", r.size_mismatches},
                                        {"refcount_mismatches", refcounts},
                                        {"refcounts_repaired", repaired},
                                        {"clean", r.clean()}}
                             .dump()
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
        registry::token_repository tokens(*pool);
        if (p[1] == "create") {
            need(3);
            const auto expires = expiry_of(c);
            const std::string scope = scope_of(c);
            auto t = co_await tokens.create(p[2], c.get("--name"), expires, scope);
            if (!t)
                throw failure(t.error().message);
            if (json)
                std::cout
                    << nlohmann::json{{"id", t->id}, {"token", t->token}, {"user_id", t->user_id}}.dump()
                    << "\n";
            else
                std::cout << "id: " << t->id << "\ntoken: " << t->token
                          << "\n(the token is shown only now; store it safely)\n";
            co_return;
        }
        if (p[1] == "list") {
            need(3);
            auto list = co_await tokens.list(p[2]);
            auto arr = nlohmann::json::array();
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
                std::cout << arr.dump() << "\n";
            co_return;
        }
        if (p[1] == "revoke") {
            need(3);
            auto r = co_await tokens.revoke(p[2]);
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
    if (ctl::is_remote_command(c)) {
        try {
            return ctl::run_remote(c, usage);
        } catch (const failure& f) {
            std::fprintf(stderr, "depotctl: %s\n", f.what());
            return f.code;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "depotctl: %s\n", e.what());
            return 1;
        }
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
