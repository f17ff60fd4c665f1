#include "command_line.hpp"

#include "command_table.hpp"

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
    for (const auto& f : all_flags())
        if (f.name == name)
            return &f;
    return nullptr;
}

/// The flags `cmd` accepts (null: the union, before a command is known), common ones included.
std::vector<std::string_view> accepted(const command_info* cmd)
{
    std::vector<std::string_view> out = {"--json", "--help"};
    if (!cmd) {
        for (const auto& f : all_flags())
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
    for (const auto& cmd : commands()) {
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
    for (const auto& cmd : commands()) {
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
    for (const auto& f : all_flags()) {
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
    for (const auto& cmd : commands()) {
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
