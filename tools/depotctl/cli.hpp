#pragma once
/// \file
/// depotctl's parsed command line, shared by the local (PostgreSQL) and the remote (HTTP) commands.

#include <cstdlib>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace depot::ctl {

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

/// A command failure: the message goes to stderr, `code` is the exit status (2: usage).
struct failure : std::runtime_error
{
    int code;
    failure(std::string m, int c = 1) : std::runtime_error(std::move(m)), code(c) {}
};

inline std::string env_or(const char* name, const std::string& fallback)
{
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : fallback;
}

/// --expires-in as seconds (absent: nullopt). Throws failure (exit 2) unless a positive number.
inline std::optional<long> expires_in_seconds(const cli& c)
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
    return seconds;
}

/// The commands that only talk to a running depotd over HTTP (model, version, ..., team, bucket, push, pull).
bool is_remote_command(const cli& c);
/// Runs a remote command, or user/key/token through the REST API; returns the exit status. Throws `failure`.
int run_remote(const cli& c);

} // namespace depot::ctl
