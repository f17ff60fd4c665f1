#include "auth/amz_time.hpp"

#include <array>
#include <cstdio>

namespace depot::auth {
namespace {

using std::chrono::system_clock;

/// Reads exactly `width` decimal digits at `pos`; nullopt if any is not a digit.
std::optional<int> digits(std::string_view s, std::size_t pos, std::size_t width)
{
    if (pos + width > s.size())
        return std::nullopt;
    int v = 0;
    for (std::size_t i = pos; i < pos + width; ++i) {
        if (s[i] < '0' || s[i] > '9')
            return std::nullopt;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

struct civil_time
{
    int year = 0;
    int month = 0;
    int day = 0;
    int hour = 0;
    int minute = 0;
    int second = 0;
};

std::optional<system_clock::time_point> to_time_point(const civil_time& c)
{
    using namespace std::chrono;
    if (c.hour > 23 || c.minute > 59 || c.second > 59)
        return std::nullopt;
    year_month_day ymd{year{c.year}, month{static_cast<unsigned>(c.month)},
                       day{static_cast<unsigned>(c.day)}};
    if (!ymd.ok())
        return std::nullopt;
    return time_point_cast<system_clock::duration>(sys_days{ymd} + hours{c.hour} + minutes{c.minute} +
                                                   seconds{c.second});
}

/// Parses "HH:MM:SS" at `pos`.
bool parse_clock(std::string_view s, std::size_t pos, civil_time& c)
{
    auto h = digits(s, pos, 2);
    auto m = digits(s, pos + 3, 2);
    auto sec = digits(s, pos + 6, 2);
    if (!h || !m || !sec || s[pos + 2] != ':' || s[pos + 5] != ':')
        return false;
    c.hour = *h;
    c.minute = *m;
    c.second = *sec;
    return true;
}

constexpr std::array<std::string_view, 12> month_names{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::array<std::string_view, 7> short_days{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
constexpr std::array<std::string_view, 7> long_days{"Monday", "Tuesday",  "Wednesday", "Thursday",
                                                    "Friday", "Saturday", "Sunday"};

int month_number(std::string_view name)
{
    for (std::size_t i = 0; i < month_names.size(); ++i) {
        if (month_names[i] == name)
            return static_cast<int>(i) + 1;
    }
    return 0;
}

template <std::size_t N>
bool one_of(std::string_view name, const std::array<std::string_view, N>& names)
{
    for (auto n : names) {
        if (n == name)
            return true;
    }
    return false;
}

/// "Fri, 24 May 2013 00:00:00 GMT"
std::optional<system_clock::time_point> parse_imf_fixdate(std::string_view s)
{
    if (s.size() != 29 || !one_of(s.substr(0, 3), short_days) || s.substr(3, 2) != ", " || s[7] != ' ' ||
        s[11] != ' ' || s[16] != ' ' || s.substr(25) != " GMT")
        return std::nullopt;
    civil_time c;
    auto day = digits(s, 5, 2);
    auto year = digits(s, 12, 4);
    c.month = month_number(s.substr(8, 3));
    if (!day || !year || c.month == 0 || !parse_clock(s, 17, c))
        return std::nullopt;
    c.day = *day;
    c.year = *year;
    return to_time_point(c);
}

/// "Friday, 24-May-13 00:00:00 GMT"
std::optional<system_clock::time_point> parse_rfc850(std::string_view s)
{
    auto comma = s.find(", ");
    if (comma == std::string_view::npos || !one_of(s.substr(0, comma), long_days))
        return std::nullopt;
    auto rest = s.substr(comma + 2);
    if (rest.size() != 22 || rest[2] != '-' || rest[6] != '-' || rest[9] != ' ' || rest.substr(18) != " GMT")
        return std::nullopt;
    civil_time c;
    auto day = digits(rest, 0, 2);
    auto yy = digits(rest, 7, 2);
    c.month = month_number(rest.substr(3, 3));
    if (!day || !yy || c.month == 0 || !parse_clock(rest, 10, c))
        return std::nullopt;
    c.day = *day;
    // Two-digit years: 70-99 are the 1900s, the rest the 2000s (a fixed pivot keeps parsing deterministic).
    c.year = *yy >= 70 ? 1900 + *yy : 2000 + *yy;
    return to_time_point(c);
}

/// "Fri May 24 00:00:00 2013" (a single-digit day is padded with a space: "Fri May  4 ...")
std::optional<system_clock::time_point> parse_asctime(std::string_view s)
{
    if (s.size() != 24 || !one_of(s.substr(0, 3), short_days) || s[3] != ' ' || s[7] != ' ' || s[10] != ' ' ||
        s[19] != ' ')
        return std::nullopt;
    civil_time c;
    c.month = month_number(s.substr(4, 3));
    std::optional<int> day = s[8] == ' ' ? digits(s, 9, 1) : digits(s, 8, 2);
    auto year = digits(s, 20, 4);
    if (!day || !year || c.month == 0 || !parse_clock(s, 11, c))
        return std::nullopt;
    c.day = *day;
    c.year = *year;
    return to_time_point(c);
}

} // namespace

std::optional<system_clock::time_point> parse_amz_date(std::string_view s)
{
    if (s.size() != 16 || s[8] != 'T' || s[15] != 'Z')
        return std::nullopt;
    auto year = digits(s, 0, 4);
    auto month = digits(s, 4, 2);
    auto day = digits(s, 6, 2);
    auto hour = digits(s, 9, 2);
    auto minute = digits(s, 11, 2);
    auto second = digits(s, 13, 2);
    if (!year || !month || !day || !hour || !minute || !second)
        return std::nullopt;
    return to_time_point(civil_time{*year, *month, *day, *hour, *minute, *second});
}

std::string format_amz_date(system_clock::time_point t)
{
    using namespace std::chrono;
    auto secs = floor<seconds>(t);
    auto days = floor<std::chrono::days>(secs);
    year_month_day ymd{days};
    hh_mm_ss hms{secs - days};
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04d%02u%02uT%02d%02d%02dZ", static_cast<int>(ymd.year()),
                  static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                  static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                  static_cast<int>(hms.seconds().count()));
    return buf;
}

std::optional<system_clock::time_point> parse_http_date(std::string_view text)
{
    while (!text.empty() && text.front() == ' ')
        text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ')
        text.remove_suffix(1);
    if (auto t = parse_imf_fixdate(text))
        return t;
    if (auto t = parse_rfc850(text))
        return t;
    return parse_asctime(text);
}

} // namespace depot::auth
