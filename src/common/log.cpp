#include "common/log.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace depot::log {
namespace {

std::atomic<level> current_level{level::info};
std::mutex write_mutex;

void append_escaped(std::string& out, std::string_view s)
{
    out.push_back('"');
    for (unsigned char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out.push_back(static_cast<char>(c)); // UTF-8 passes through; invalid bytes are the caller's
            }
        }
    }
    out.push_back('"');
}

std::string_view level_name(level l)
{
    switch (l) {
    case level::debug:
        return "debug";
    case level::info:
        return "info";
    case level::warn:
        return "warn";
    case level::error:
        return "error";
    }
    return "info";
}

} // namespace

bool parse_level(std::string_view text, level& out)
{
    if (text == "debug")
        out = level::debug;
    else if (text == "info")
        out = level::info;
    else if (text == "warn" || text == "warning")
        out = level::warn;
    else if (text == "error")
        out = level::error;
    else
        return false;
    return true;
}

void set_level(level l)
{
    current_level.store(l, std::memory_order_relaxed);
}
level get_level()
{
    return current_level.load(std::memory_order_relaxed);
}

void write(level l, std::string_view msg, std::initializer_list<field> fields)
{
    if (!enabled(l))
        return;
    auto now = std::chrono::system_clock::now();
    auto secs = std::chrono::system_clock::to_time_t(now);
    auto micros =
        std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char ts[64];
    std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(micros));
    std::string line;
    line.reserve(128);
    line += "{\"ts\":\"";
    line += ts;
    line += "\",\"level\":\"";
    line += level_name(l);
    line += "\",\"msg\":";
    append_escaped(line, msg);
    for (const auto& [key, v] : fields) {
        line.push_back(',');
        append_escaped(line, key);
        line.push_back(':');
        switch (v.kind) {
        case value::string_kind:
            append_escaped(line, v.s);
            break;
        case value::int_kind:
            line += std::to_string(v.i);
            break;
        case value::uint_kind:
            line += std::to_string(v.u);
            break;
        case value::double_kind:
            line += std::to_string(v.d);
            break;
        case value::bool_kind:
            line += v.b ? "true" : "false";
            break;
        }
    }
    line += "}\n";
    std::lock_guard lock(write_mutex);
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
}

} // namespace depot::log
