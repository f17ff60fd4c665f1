#include "command_line.hpp"

#include <algorithm>
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>
#include <boost/program_options/positional_options.hpp>
#include <cstdio>
#include <map>
#include <set>

namespace depot::ctl {
namespace {

namespace po = boost::program_options;

struct flag_info
{
    std::string_view name;
    std::string_view metavar; ///< empty for a switch
    std::string_view help;
};

// Every flag depotctl knows, once. A command accepts its own flags, its groups' and the common ones.
const std::vector<flag_info> all_flags = {
    // common
    {"--json", "", "machine-readable output (a JSON value on stdout)"},
    {"--help", "", "this help (also -h)"},
    // group_database
    {"--config", "FILE", "depotd's configuration file: its database and server key (DEPOT_CONFIG)"},
    {"--database-url", "URL", "PostgreSQL of the installation (DEPOT_DATABASE_URL)"},
    {"--server-key-file", "FILE",
     "the server key depotd uses (DEPOT_SERVER_KEY_FILE, default ./var/server.key)"},
    {"--server-key", "HEX", "the server key itself (DEPOT_SERVER_KEY)"},
    // group_remote
    {"--endpoint", "URL", "depotd (DEPOT_ENDPOINT, AWS_ENDPOINT_URL, endpoint_url in ~/.aws/config)"},
    {"--access-key", "ID",
     "S3 access key id (AWS_ACCESS_KEY_ID); for key create with a database: the new key's id"},
    {"--secret-key", "S", "its secret (AWS_SECRET_ACCESS_KEY)"},
    {"--profile", "NAME", "AWS profile (AWS_PROFILE) in ~/.aws/credentials and ~/.aws/config"},
    {"--token", "TOKEN", "an API token (DEPOT_TOKEN; REST commands only)"},
    {"--region", "R", "region to sign for (AWS_REGION, region in ~/.aws/config, default us-east-1)"},
    {"--ca-bundle", "FILE", "trusted certificates for https (AWS_CA_BUNDLE)"},
    {"--timeout", "SECONDS", "per request (default 120)"},
    {"--no-progress", "", "no progress bars (drawn only on a terminal anyway)"},
    {"--remote", "", "through the REST API even when a database URL is set"},
    // group_storage
    {"--storage", "KIND", "blob store: localfs, rados or memory (DEPOT_STORAGE)"},
    {"--blob-dir", "DIR", "localfs blob directory (DEPOT_BLOB_DIR)"},
    {"--rados-conf", "FILE", "ceph.conf (DEPOT_RADOS_CONF)"},
    {"--rados-user", "NAME", "cephx client (DEPOT_RADOS_USER)"},
    {"--rados-keyring", "FILE", "keyring (DEPOT_RADOS_KEYRING)"},
    {"--rados-pool", "POOL", "pool (DEPOT_RADOS_POOL)"},
    {"--rados-namespace", "NS", "namespace (DEPOT_RADOS_NAMESPACE)"},
    {"--rados-op-timeout", "SECONDS", "RADOS operation timeout (DEPOT_RADOS_OP_TIMEOUT)"},
    // group_scope
    {"--read-only", "", "scope: reads only"},
    {"--bucket", "B", "scope: one bucket (model create, webhook create: the bucket)"},
    {"--prefix", "P", "scope: keys under P (with --bucket); snapshot and model commands: the prefix"},
    {"--model", "TEAM/MODEL", "scope: one model (webhook create: the model)"},
    {"--alias", "A", "scope: the files of the version alias A points to (implies --read-only)"},
    // group_version
    {"--label", "L", "version label"},
    {"--description", "D", "description"},
    {"--framework", "F", "framework (pytorch, ...)"},
    {"--format", "F", "file format (safetensors, ...)"},
    {"--parent", "N", "the version this one derives from"},
    {"--run-url", "U", "training run URL"},
    {"--labels", "JSON", "labels as a JSON object"},
    {"--metrics", "JSON", "metrics as a JSON object"},
    {"--snapshot", "NAME", "the prefix as snapshot NAME of the model's bucket saw it"},
    // own flags
    {"--display-name", "N", "display name"},
    {"--email", "E", "e-mail address"},
    {"--admin", "", "an installation admin"},
    {"--secret", "SECRET", "the new key's secret (with --access-key; database only)"},
    {"--credentials-file", "PATH", "also write the key into this AWS credentials file (mode 0600)"},
    {"--expires-in", "SECONDS", "the credential stops working after this"},
    {"--name", "N", "a name to recognise the token by"},
    {"--repair", "", "recompute reference counts"},
    {"--dry-run", "", "only report"},
    {"--grace", "SECONDS", "reclaim only blobs older than this (default 3600)"},
    {"--since", "T", "rows at or after T (ISO 8601)"},
    {"--until", "T", "rows before T"},
    {"--actor", "U", "rows of this user"},
    {"--team", "T", "rows of this team"},
    {"--action", "A", "rows of this action"},
    {"--resource", "R", "rows of this resource"},
    {"--output", "FILE", "write there instead of stdout"},
    {"--before", "T", "archive the rows written before T"},
    {"--key-prefix", "P", "archive object prefix (default audit/)"},
    {"--files", "", "with the version's files"},
    {"--comment", "C", "a comment recorded with the transition"},
    {"--if-match", "ETAG", "only if the alias is still at this ETag"},
    {"--target-bucket", "B", "restore into this bucket (default the snapshot's)"},
    {"--target-prefix", "P", "restore under this prefix"},
    {"--events", "T1,T2", "event types (default all)"},
    {"--url", "U", "new target URL"},
    {"--overlap", "SECONDS", "the old secret also signs for this long (default 86400)"},
    {"--state", "S", "only deliveries in this state"},
    {"--wait", "", "wait until it completed (exit 1 if it failed)"},
    {"--no-version", "", "upload only, create no version"},
    {"--no-delete", "", "keep files under the prefix that are not in DIR"},
    {"--parallel", "N", "transfers at once (1-64, default 8)"},
    {"--part-size", "MiB", "multipart part size"},
    {"--multipart-threshold", "MiB", "files above this go multipart"},
    {"--models-bucket", "B", "name of the read-only model view (default models)"},
    {"--required-approvals", "N", "approvals a version needs (1-10)"},
    {"--approver-role", "ROLE", "the least role that approves (writer, maintainer, admin)"},
    {"--protected-aliases", "A,B", "aliases that only point at approved versions"},
    {"--dedup", "on|off", "deduplicate object contents"},
    {"--object-events", "on|off", "send object events to the owner's webhooks"},
};

const std::vector<std::string_view>& group_flags(flag_group g)
{
    static const std::vector<std::string_view> database = {"--config", "--database-url", "--server-key-file",
                                                           "--server-key"};
    static const std::vector<std::string_view> remote = {"--endpoint",  "--access-key", "--secret-key",
                                                         "--profile",   "--token",      "--region",
                                                         "--ca-bundle", "--timeout",    "--no-progress"};
    static const std::vector<std::string_view> storage = {
        "--storage",       "--blob-dir",   "--rados-conf",      "--rados-user",
        "--rados-keyring", "--rados-pool", "--rados-namespace", "--rados-op-timeout"};
    static const std::vector<std::string_view> scope = {"--read-only", "--bucket", "--prefix", "--model",
                                                        "--alias"};
    static const std::vector<std::string_view> version = {"--label",  "--description", "--framework",
                                                          "--format", "--parent",      "--run-url",
                                                          "--labels", "--metrics",     "--snapshot"};
    switch (g) {
    case group_database:
        return database;
    case group_remote:
        return remote;
    case group_storage:
        return storage;
    case group_scope:
        return scope;
    default:
        return version;
    }
}

constexpr unsigned db = group_database;
constexpr unsigned remote = group_remote;
// user, key and token work on the database when there is one, otherwise through the REST API.
constexpr unsigned both = group_database | group_remote;

const std::vector<command_info> table = {
    {"migrate", "", "apply pending schema migrations", db, {}, "", "depotctl migrate"},
    {"user create",
     "ID",
     "create a user (an installation admin with --admin)",
     both,
     {"--display-name", "--email", "--admin", "--remote"},
     "With a database URL it writes the database; without one it asks depotd's REST API, as an installation\n"
     "admin.",
     "depotctl user create bob --display-name 'Bob B.'\n"
     "DEPOT_TOKEN=dpt_... depotctl --endpoint https://depot.example.com user create carol --admin"},
    {"user list", "", "list the users", both, {"--remote"}, "", "depotctl user list --json"},
    {"key create",
     "USER_ID [SCOPE]",
     "create an S3 access key (the secret is shown once)",
     both | group_scope,
     {"--secret", "--credentials-file", "--expires-in", "--remote"},
     "SCOPE narrows the key, it never grants: --read-only --bucket B [--prefix P] | --model TEAM/MODEL\n"
     "[--alias A]. --access-key ID --secret S choose the key (database only).",
     "depotctl key create bob --credentials-file ~/.aws/credentials --profile bob\n"
     "depotctl key create bob --model ml/resnet --alias production --expires-in 86400"},
    {"key list",
     "USER_ID",
     "list a user's keys (never their secrets)",
     both,
     {"--remote"},
     "",
     "depotctl key list bob"},
    {"key revoke",
     "ACCESS_KEY_ID",
     "revoke a key",
     both,
     {"--remote"},
     "",
     "depotctl key revoke AKIA... --json"},
    {"token create",
     "USER_ID [SCOPE]",
     "create an API token for the REST API (shown once)",
     both | group_scope,
     {"--name", "--expires-in", "--remote"},
     "",
     "depotctl token create bob --name ci --expires-in 3600"},
    {"token list", "USER_ID", "list a user's tokens", both, {"--remote"}, "", "depotctl token list bob"},
    {"token revoke", "TOKEN_ID", "revoke a token", both, {"--remote"}, "", "depotctl token revoke 12"},
    {"fsck",
     "[STORAGE]",
     "cross-check registry and blob store (exit 1 if they disagree)",
     db | group_storage,
     {"--repair"},
     "",
     "depotctl fsck --storage rados --rados-pool depot"},
    {"gc",
     "[STORAGE]",
     "reclaim blobs nothing references",
     db | group_storage,
     {"--dry-run", "--grace"},
     "",
     "depotctl gc --dry-run"},
    {"audit verify",
     "",
     "recompute the audit log's hash chain (exit 1 naming the first bad row)",
     db,
     {},
     "",
     "depotctl audit verify"},
    {"audit export",
     "",
     "the audit log as JSON Lines",
     db,
     {"--since", "--until", "--actor", "--team", "--action", "--resource", "--output"},
     "",
     "depotctl audit export --since 2026-01-01T00:00:00Z --team ml --output audit.jsonl"},
    {"audit archive",
     "[STORAGE]",
     "move the rows written before T into s3://B/P as JSON Lines",
     db | group_storage,
     {"--before", "--bucket", "--key-prefix"},
     "",
     "depotctl audit archive --before 2026-01-01T00:00:00Z --bucket audit-archive"},
    {"team create",
     "TEAM",
     "create a team (you become its admin)",
     remote,
     {"--required-approvals", "--approver-role", "--protected-aliases"},
     "the flags set its default policy",
     "depotctl team create ml --required-approvals 2"},
    {"team list",
     "",
     "the teams you belong to (every team for an installation admin)",
     remote,
     {},
     "",
     "depotctl team list"},
    {"team show", "TEAM", "a team with its members", remote, {}, "", "depotctl team show ml --json"},
    {"member set",
     "TEAM USER ROLE",
     "add a member or change its role (reader, writer, maintainer, admin)",
     remote,
     {},
     "",
     "depotctl member set ml bob writer"},
    {"member remove", "TEAM USER", "remove a member", remote, {}, "", "depotctl member remove ml bob --json"},
    {"member list", "TEAM", "a team's members", remote, {}, "", "depotctl member list ml"},
    {"policy get",
     "TEAM/MODEL",
     "a model's approval policy",
     remote,
     {},
     "",
     "depotctl policy get ml/resnet"},
    {"policy set",
     "TEAM/MODEL",
     "change a model's approval policy (team admins)",
     remote,
     {"--required-approvals", "--approver-role", "--protected-aliases"},
     "",
     "depotctl policy set ml/resnet --required-approvals 2 --protected-aliases production,canary"},
    {"bucket show",
     "BUCKET",
     "a bucket's settings and usage",
     remote,
     {},
     "",
     "depotctl bucket show ml-work"},
    {"bucket set",
     "BUCKET",
     "change a bucket's settings",
     remote,
     {"--dedup", "--object-events"},
     "",
     "depotctl bucket set ml-work --dedup off --object-events on"},
    {"model create",
     "TEAM/MODEL",
     "register a model on a bucket prefix",
     remote,
     {"--bucket", "--prefix", "--description"},
     "",
     "depotctl model create ml/resnet --bucket ml-work --prefix resnet/"},
    {"model list", "TEAM", "a team's models", remote, {}, "", "depotctl model list ml"},
    {"model show", "TEAM/MODEL", "a model with its aliases", remote, {}, "", "depotctl model show ml/resnet"},
    {"version create",
     "TEAM/MODEL",
     "freeze the files under the model's prefix as a version",
     remote | group_version,
     {},
     "",
     "depotctl version create ml/resnet --label v1 --framework pytorch"},
    {"version list", "TEAM/MODEL", "a model's versions", remote, {}, "", "depotctl version list ml/resnet"},
    {"version show",
     "TEAM/MODEL[:VERSION]",
     "a version (number, label or alias; default latest)",
     remote,
     {"--files"},
     "",
     "depotctl version show ml/resnet:production --files"},
    {"version diff",
     "TEAM/MODEL:VERSION OTHER",
     "added, removed and changed files",
     remote,
     {},
     "",
     "depotctl version diff ml/resnet:2 1"},
    {"version submit",
     "TEAM/MODEL:VERSION",
     "submit a version for review",
     remote,
     {"--comment"},
     "",
     "depotctl version submit ml/resnet:2"},
    {"version approve",
     "TEAM/MODEL:VERSION",
     "approve a pending version",
     remote,
     {"--comment"},
     "",
     "depotctl version approve ml/resnet:2 --comment 'looks good'"},
    {"version reject",
     "TEAM/MODEL:VERSION",
     "reject a pending version",
     remote,
     {"--comment"},
     "",
     "depotctl version reject ml/resnet:2 --comment 'accuracy dropped'"},
    {"version deprecate",
     "TEAM/MODEL:VERSION",
     "deprecate a version",
     remote,
     {"--comment"},
     "",
     "depotctl version deprecate ml/resnet:1"},
    {"version archive",
     "TEAM/MODEL:VERSION",
     "archive a version",
     remote,
     {"--comment"},
     "",
     "depotctl version archive ml/resnet:1"},
    {"alias set",
     "TEAM/MODEL ALIAS VERSION",
     "point an alias at a version",
     remote,
     {"--if-match"},
     "",
     "depotctl alias set ml/resnet production 2"},
    {"alias delete",
     "TEAM/MODEL ALIAS",
     "delete an alias",
     remote,
     {"--if-match"},
     "",
     "depotctl alias delete ml/resnet canary --json"},
    {"alias list", "TEAM/MODEL", "a model's aliases", remote, {}, "", "depotctl alias list ml/resnet"},
    {"snapshot create",
     "BUCKET NAME",
     "an O(1) snapshot, readable at s3://BUCKET/.snapshots/NAME/",
     remote,
     {"--prefix"},
     "",
     "depotctl snapshot create ml-work before-cleanup --prefix resnet/"},
    {"snapshot list", "BUCKET", "a bucket's snapshots", remote, {}, "", "depotctl snapshot list ml-work"},
    {"snapshot show",
     "BUCKET NAME",
     "one snapshot",
     remote,
     {},
     "",
     "depotctl snapshot show ml-work nightly"},
    {"snapshot delete",
     "BUCKET NAME",
     "delete a snapshot",
     remote,
     {},
     "",
     "depotctl snapshot delete ml-work nightly --json"},
    {"snapshot restore",
     "BUCKET NAME",
     "copy a snapshot's objects back by reference (no bytes move)",
     remote,
     {"--target-bucket", "--target-prefix", "--prefix"},
     "",
     "depotctl snapshot restore ml-work nightly --target-prefix restored/"},
    {"webhook create",
     "TEAM URL",
     "subscribe URL to the team's events (prints the signing secret)",
     remote,
     {"--events", "--model", "--bucket", "--description"},
     "",
     "depotctl webhook create ml https://ci.example.com/hook --events version.approved"},
    {"webhook list", "TEAM", "a team's webhooks", remote, {}, "", "depotctl webhook list ml"},
    {"webhook show", "TEAM ID", "one webhook", remote, {}, "", "depotctl webhook show ml 3"},
    {"webhook update",
     "TEAM ID",
     "change a webhook",
     remote,
     {"--url", "--events", "--description"},
     "",
     "depotctl webhook update ml 3 --events version.approved,version.rejected"},
    {"webhook enable", "TEAM ID", "enable a webhook", remote, {}, "", "depotctl webhook enable ml 3"},
    {"webhook disable", "TEAM ID", "disable a webhook", remote, {}, "", "depotctl webhook disable ml 3"},
    {"webhook delete", "TEAM ID", "delete a webhook", remote, {}, "", "depotctl webhook delete ml 3 --json"},
    {"webhook ping", "TEAM ID", "send a test event", remote, {}, "", "depotctl webhook ping ml 3"},
    {"webhook rotate",
     "TEAM ID",
     "a new signing secret",
     remote,
     {"--overlap"},
     "",
     "depotctl webhook rotate ml 3 --overlap 3600"},
    {"webhook deliveries",
     "TEAM ID [DELIVERY]",
     "deliveries, or one delivery with its attempts",
     remote,
     {"--state"},
     "",
     "depotctl webhook deliveries ml 3 --state failed"},
    {"webhook redeliver",
     "TEAM ID DELIVERY",
     "send a delivery again now",
     remote,
     {},
     "",
     "depotctl webhook redeliver ml 3 41"},
    {"warmup start",
     "TEAM/MODEL[:VERSION]",
     "preload a version into every depotd's read cache",
     remote,
     {"--alias", "--wait"},
     "",
     "depotctl warmup start ml/resnet --alias production --wait"},
    {"warmup list", "TEAM/MODEL", "a model's warm-ups", remote, {}, "", "depotctl warmup list ml/resnet"},
    {"warmup show",
     "TEAM/MODEL ID",
     "a warm-up with its progress per depotd",
     remote,
     {},
     "",
     "depotctl warmup show ml/resnet 5"},
    {"push",
     "DIR TEAM/MODEL",
     "upload DIR to the model's prefix, then create a version",
     remote | group_version,
     {"--no-version", "--no-delete", "--parallel", "--part-size", "--multipart-threshold"},
     "Contents the server already has are not sent again; files no longer in DIR are removed from the\n"
     "prefix unless --no-delete.",
     "depotctl push ./out ml/resnet --label v3 --metrics '{\"top1\": 0.81}'\n"
     "AWS_PROFILE=bob depotctl push ./out ml/resnet --no-version"},
    {"pull",
     "TEAM/MODEL[:VERSION] DIR",
     "download a version (SHA-256 verified; right files already there stay)",
     remote,
     {"--parallel", "--models-bucket"},
     "",
     "depotctl pull ml/resnet:production ./resnet"},
    {"completion",
     "bash|zsh",
     "print a shell completion script",
     0,
     {},
     "",
     "source <(depotctl completion bash)\ndepotctl completion zsh > \"${fpath[1]}/_depotctl\""},
};

std::vector<std::string_view> words(std::string_view path)
{
    std::vector<std::string_view> out;
    while (!path.empty()) {
        auto sp = path.find(' ');
        out.push_back(path.substr(0, sp));
        path = sp == std::string_view::npos ? std::string_view() : path.substr(sp + 1);
    }
    return out;
}

std::vector<std::string_view> lines(std::string_view text)
{
    std::vector<std::string_view> out;
    while (!text.empty()) {
        auto nl = text.find('\n');
        out.push_back(text.substr(0, nl));
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    }
    return out;
}

const flag_info* flag_named(std::string_view name)
{
    for (const auto& f : all_flags)
        if (f.name == name)
            return &f;
    return nullptr;
}

/// The flags `cmd` accepts (null: the union, before a command is known), common ones included.
std::vector<std::string_view> accepted(const command_info* cmd)
{
    std::vector<std::string_view> out = {"--json", "--help"};
    if (!cmd) {
        for (const auto& f : all_flags)
            out.push_back(f.name);
        return out;
    }
    for (auto g : {group_database, group_remote, group_storage, group_scope, group_version})
        if (cmd->groups & g)
            for (auto f : group_flags(g))
                out.push_back(f);
    for (auto f : cmd->flags)
        out.push_back(f);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b)
{
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

/// "did you mean --label?" when a flag `cmd` accepts is close to `given`.
std::string suggestion(std::string_view given, const command_info* cmd)
{
    std::string_view best;
    std::size_t best_distance = 4;
    for (auto f : accepted(cmd)) {
        auto d = edit_distance(given, f);
        if (d < best_distance) {
            best = f;
            best_distance = d;
        }
    }
    return best.empty() ? std::string() : " (did you mean " + std::string(best) + "?)";
}

std::string command_help(const command_info& cmd)
{
    std::string out = "Usage: depotctl " + std::string(cmd.path);
    if (!cmd.args.empty())
        out += " " + std::string(cmd.args);
    out += " [options]\n\n" + std::string(cmd.summary) + "\n";
    if (!cmd.details.empty())
        out += "\n" + std::string(cmd.details) + "\n";
    out += "\nOptions:\n";
    for (auto name : accepted(&cmd)) {
        const auto* f = flag_named(name);
        std::string left =
            "  " + std::string(name) + (f->metavar.empty() ? "" : " " + std::string(f->metavar));
        left.resize(std::max<std::size_t>(left.size() + 2, 32), ' ');
        out += left + std::string(f->help) + "\n";
    }
    if (!cmd.examples.empty()) {
        out += "\nExamples:\n";
        for (auto line : lines(cmd.examples))
            out += "  " + std::string(line) + "\n";
    }
    return out;
}

/// The commands of family `family` ("team"), or every command for "".
std::string family_help(std::string_view family)
{
    std::string out;
    for (const auto& cmd : table) {
        if (!family.empty() && words(cmd.path)[0] != family)
            continue;
        std::string left =
            "  " + std::string(cmd.path) + (cmd.args.empty() ? "" : " " + std::string(cmd.args));
        if (left.size() + 2 > 44) {
            out += left + "\n";
            left.clear();
        }
        left.resize(44, ' ');
        out += left + std::string(cmd.summary) + "\n";
    }
    return out;
}

} // namespace

const std::vector<command_info>& commands()
{
    return table;
}

std::string overview_help()
{
    return "Usage: depotctl [global options] COMMAND [arguments] [options]\n\n"
           "Administration of a Depot installation. migrate, fsck, gc and audit work on the database\n"
           "(with the server key depotd uses); user, key and token on the database when a database URL\n"
           "is set, otherwise through the REST API of a running depotd, like every other command.\n\n"
           "Commands (depotctl COMMAND -h: its options and examples):\n" +
           family_help("") +
           "\nGlobal options:\n"
           "  --config FILE               DEPOT_CONFIG: depotd's configuration file (database, key, store)\n"
           "  --database-url URL          DEPOT_DATABASE_URL\n"
           "  --server-key-file FILE      DEPOT_SERVER_KEY_FILE (default ./var/server.key; never created)\n"
           "  --server-key HEX            DEPOT_SERVER_KEY\n"
           "  --endpoint URL              DEPOT_ENDPOINT, AWS_ENDPOINT_URL, endpoint_url in ~/.aws/config\n"
           "                              (default http://127.0.0.1:9000)\n"
           "  --access-key ID --secret-key S   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY\n"
           "  --profile NAME              AWS_PROFILE, in ~/.aws/credentials and ~/.aws/config\n"
           "  --token TOKEN               DEPOT_TOKEN: an API token (REST commands only)\n"
           "  --region R                  AWS_REGION, region in ~/.aws/config (default us-east-1)\n"
           "  --json                      machine-readable output, on every command\n"
           "  -h, --help                  help; `depotctl COMMAND -h` for one command, with examples\n"
           "  --version                   depotctl's version\n";
}

const command_info* find_command(const cli& c)
{
    const command_info* best = nullptr;
    std::size_t best_words = 0;
    for (const auto& cmd : table) {
        auto w = words(cmd.path);
        if (w.size() > c.positional.size() || w.size() <= best_words)
            continue;
        if (std::equal(w.begin(), w.end(), c.positional.begin())) {
            best = &cmd;
            best_words = w.size();
        }
    }
    return best;
}

std::optional<int> parse_command_line(const std::vector<std::string>& args, cli& out)
{
    if (args.size() == 1 && args[0] == "--version") {
        std::printf("depotctl %s\n", DEPOT_VERSION);
        return 0;
    }
    // Every known flag, a switch or taking one value; the command decides below which ones apply.
    po::options_description known;
    for (const auto& f : all_flags) {
        const std::string name = f.name == "--help" ? "help,h" : std::string(f.name.substr(2));
        if (f.metavar.empty())
            known.add_options()(name.c_str(), "");
        else
            known.add_options()(name.c_str(), po::value<std::string>(), "");
    }
    known.add_options()("version", "")("args", po::value<std::vector<std::string>>(), "");
    po::positional_options_description positional;
    positional.add("args", -1);
    // No abbreviations (--lab is not --label) and no short options but -h.
    const int style = po::command_line_style::allow_long | po::command_line_style::long_allow_adjacent |
                      po::command_line_style::long_allow_next | po::command_line_style::allow_short |
                      po::command_line_style::short_allow_next | po::command_line_style::allow_dash_for_short;
    po::parsed_options parsed(nullptr);
    try {
        parsed = po::command_line_parser(args)
                     .options(known)
                     .positional(positional)
                     .style(style)
                     .allow_unregistered()
                     .run();
    } catch (const po::error& e) {
        std::fprintf(stderr, "depotctl: %s\n", e.what());
        return 2;
    }
    std::vector<std::string> unknown;
    bool help = false;
    bool version = false;
    for (const auto& o : parsed.options) {
        if (o.string_key == "args") {
            out.positional.insert(out.positional.end(), o.value.begin(), o.value.end());
        } else if (o.unregistered) {
            unknown.push_back(o.original_tokens.empty() ? o.string_key : o.original_tokens.front());
        } else if (o.string_key == "help") {
            help = true;
        } else if (o.string_key == "version") {
            version = true;
        } else {
            out.flags["--" + o.string_key] = o.value.empty() ? std::string() : o.value.front();
        }
    }
    const command_info* cmd = find_command(out);
    if (help) {
        if (cmd) {
            std::fputs(command_help(*cmd).c_str(), stdout);
        } else if (!out.positional.empty() && !family_help(out.positional[0]).empty()) {
            std::printf("Usage: depotctl %s SUBCOMMAND ... [options]   (depotctl %s SUBCOMMAND -h: its "
                        "options and examples)\n\n%s",
                        out.positional[0].c_str(), out.positional[0].c_str(),
                        family_help(out.positional[0]).c_str());
        } else {
            std::fputs(overview_help().c_str(), stdout);
        }
        return 0;
    }
    if (version) {
        std::printf("depotctl %s\n", DEPOT_VERSION);
        return 0;
    }
    if (out.positional.empty()) {
        std::fputs(overview_help().c_str(), stderr);
        return 2;
    }
    if (!cmd) {
        const auto& word = out.positional[0];
        std::string family = family_help(word);
        if (family.empty())
            std::fprintf(stderr, "depotctl: unknown command '%s' (see depotctl -h)\n", word.c_str());
        else if (out.positional.size() < 2)
            std::fprintf(stderr, "depotctl: %s needs one of:\n%s", word.c_str(), family.c_str());
        else
            std::fprintf(stderr, "depotctl: unknown %s command '%s'; one of:\n%s", word.c_str(),
                         out.positional[1].c_str(), family.c_str());
        return 2;
    }
    const std::string where = "depotctl " + std::string(cmd->path);
    for (const auto& u : unknown) {
        const std::string name = u.substr(0, u.find('='));
        std::fprintf(stderr, "%s: unknown option %s%s (see %s -h)\n", where.c_str(), name.c_str(),
                     suggestion(name, cmd).c_str(), where.c_str());
        return 2;
    }
    const auto ok = accepted(cmd);
    for (const auto& [name, value] : out.flags)
        if (std::find(ok.begin(), ok.end(), name) == ok.end()) {
            std::fprintf(stderr, "%s: option %s does not apply here%s (see %s -h)\n", where.c_str(),
                         name.c_str(), suggestion(name, cmd).c_str(), where.c_str());
            return 2;
        }
    return std::nullopt;
}

std::string completion_script(std::string_view shell)
{
    if (shell != "bash" && shell != "zsh")
        return {};
    // One case per command: its subcommands (for a family word) or its flags.
    std::string families;
    std::set<std::string> seen;
    std::string cases;
    std::map<std::string, std::string> subs;
    for (const auto& cmd : table) {
        auto w = words(cmd.path);
        if (seen.insert(std::string(w[0])).second)
            families += (families.empty() ? "" : " ") + std::string(w[0]);
        if (w.size() > 1)
            subs[std::string(w[0])] += (subs[std::string(w[0])].empty() ? "" : " ") + std::string(w[1]);
        std::string flags;
        for (auto f : accepted(&cmd))
            flags += (flags.empty() ? "" : " ") + std::string(f);
        cases += "        \"" + std::string(cmd.path) + "\") opts=\"" + flags + "\" ;;\n";
    }
    std::string sub_cases;
    for (const auto& [family, list] : subs)
        sub_cases +=
            "        " + family + ") COMPREPLY=($(compgen -W \"" + list + "\" -- \"$cur\")); return ;;\n";
    std::string script =
        std::string(shell == "zsh" ? "#compdef depotctl\nautoload -U +X bashcompinit && bashcompinit\n"
                                   : "") +
        "# depotctl completion (depotctl completion " + std::string(shell) +
        ")\n"
        "_depotctl()\n{\n"
        "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" words=() w opts=\"\"\n"
        "    for w in \"${COMP_WORDS[@]:1:COMP_CWORD-1}\"; do\n"
        "        [[ $w == -* ]] || words+=(\"$w\")\n"
        "    done\n"
        "    if [[ ${#words[@]} -eq 0 ]]; then\n"
        "        COMPREPLY=($(compgen -W \"" +
        families +
        " --help --version\" -- \"$cur\")); return\n"
        "    fi\n"
        "    if [[ ${#words[@]} -eq 1 && $cur != -* ]]; then\n"
        "        case \"${words[0]}\" in\n" +
        sub_cases +
        "        esac\n"
        "    fi\n"
        "    case \"${words[0]} ${words[1]}\" in\n" +
        cases +
        "    esac\n"
        "    if [[ -z $opts ]]; then\n"
        "        case \"${words[0]}\" in\n" +
        cases +
        "        esac\n"
        "    fi\n"
        "    if [[ $cur == -* ]]; then\n"
        "        COMPREPLY=($(compgen -W \"$opts --help\" -- \"$cur\"))\n"
        "    else\n"
        "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
        "    fi\n"
        "}\n"
        "complete -F _depotctl depotctl\n";
    return script;
}

} // namespace depot::ctl
