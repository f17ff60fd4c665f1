#pragma once
/// \file
/// depotctl's commands and flags as data: every flag once (name, metavariable, help), the flag groups, and
/// every command with its arguments, groups, own flags and example. command_line.cpp parses and explains
/// with them.

#include "command_line.hpp"

#include <string_view>
#include <vector>

namespace depot::ctl {

struct flag_info
{
    std::string_view name;
    std::string_view metavar; ///< empty for a switch
    std::string_view help;
};

/// Every flag depotctl knows, once. A command accepts its own flags, its groups' and the common ones.
const std::vector<flag_info>& all_flags();

/// The flags of a group.
const std::vector<std::string_view>& group_flags(flag_group g);

} // namespace depot::ctl
