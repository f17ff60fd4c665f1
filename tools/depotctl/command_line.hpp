#pragma once
/// \file
/// depotctl's command line: one table of commands (synopsis, summary, flags, examples) from which the
/// parser (Boost.Program_options), the help of every level, the suggestions for misspelt flags and the
/// shell completions are all made, so they cannot disagree.

#include "cli.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::ctl {

/// Flag groups a command accepts besides its own flags.
enum flag_group : unsigned
{
    group_database = 1, ///< --database-url, --server-key-file, --server-key
    group_remote = 2,   ///< --endpoint, credentials, --region, --ca-bundle, --timeout, --no-progress
    group_storage = 4,  ///< the blob store flags of depotd
    group_scope = 8,    ///< --read-only --bucket --prefix --model --alias
    group_version = 16, ///< the version fields of `version create` and `push`
};

struct command_info
{
    std::string_view path;               ///< "push", "team create"
    std::string_view args;               ///< "DIR TEAM/MODEL"
    std::string_view summary;            ///< one line
    unsigned groups = 0;                 ///< flag_group bits
    std::vector<std::string_view> flags; ///< its own flags ("--label")
    std::string_view details;            ///< more text for `-h` (optional)
    std::string_view examples;           ///< shell lines for `-h` (optional)
};

/// Every command, in the order help lists them.
const std::vector<command_info>& commands();

/// Parses argv (without argv[0]) into `out`. Returns an exit status when the command line is handled
/// already (help or --version printed: 0; a usage error printed to stderr: 2), nullopt to run the command.
/// `-h`/`--help` anywhere prints the help of the command (or command family) named so far; it needs no
/// database or endpoint.
std::optional<int> parse_command_line(const std::vector<std::string>& args, cli& out);

/// The command `c.positional` names (longest match), or null.
const command_info* find_command(const cli& c);

/// A bash or zsh completion script for depotctl ("" for another shell).
std::string completion_script(std::string_view shell);

/// The text `depotctl -h` prints.
std::string overview_help();

} // namespace depot::ctl
