#pragma once
/// \file
/// Structured logging: one JSON object per line on stderr. Fields are key/value pairs; values are escaped.
/// Never pass secrets, signatures or full Authorization headers as fields. Thread-safe; the level can be
/// changed at run time.

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace depot::log {

enum class level
{
    debug = 0,
    info = 1,
    warn = 2,
    error = 3
};

/// Parses "debug", "info", "warn"/"warning", "error"; returns false on anything else.
bool parse_level(std::string_view text, level& out);
void set_level(level l);
level get_level();
inline bool enabled(level l)
{
    return l >= get_level();
}

/// A field value: string, integer or boolean (numbers are written as JSON numbers).
struct value
{
    enum kind_t
    {
        string_kind,
        int_kind,
        uint_kind,
        double_kind,
        bool_kind
    } kind;
    std::string s;
    long long i = 0;
    unsigned long long u = 0;
    double d = 0;
    bool b = false;
    value(std::string_view v) : kind(string_kind), s(v) {}
    value(const std::string& v) : kind(string_kind), s(v) {}
    value(const char* v) : kind(string_kind), s(v) {}
    value(int v) : kind(int_kind), i(v) {}
    value(long v) : kind(int_kind), i(v) {}
    value(long long v) : kind(int_kind), i(v) {}
    value(unsigned v) : kind(uint_kind), u(v) {}
    value(unsigned long v) : kind(uint_kind), u(v) {}
    value(unsigned long long v) : kind(uint_kind), u(v) {}
    value(double v) : kind(double_kind), d(v) {}
    value(bool v) : kind(bool_kind), b(v) {}
};
using field = std::pair<std::string_view, value>;

/// Writes {"ts":..., "level":..., "msg":..., fields...} if `l` is enabled.
void write(level l, std::string_view msg, std::initializer_list<field> fields = {});

inline void debug(std::string_view msg, std::initializer_list<field> f = {})
{
    write(level::debug, msg, f);
}
inline void info(std::string_view msg, std::initializer_list<field> f = {})
{
    write(level::info, msg, f);
}
inline void warn(std::string_view msg, std::initializer_list<field> f = {})
{
    write(level::warn, msg, f);
}
inline void error(std::string_view msg, std::initializer_list<field> f = {})
{
    write(level::error, msg, f);
}

} // namespace depot::log
