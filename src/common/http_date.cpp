#include "common/http_date.hpp"

#include <algorithm>
#include <array>
#include <chrono>

namespace depot {

namespace {

using namespace std::chrono;

constexpr std::array<std::string_view, 7> short_weekdays = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr std::array<std::string_view, 7> long_weekdays = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                                           "Thursday", "Friday", "Saturday"};
constexpr std::array<std::string_view, 12> months = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/// Calendar fields of a UTC time.
struct civil
{
    int year = 0;
    unsigned month = 0; ///< 1..12
    unsigned day = 0;
    unsigned weekday = 0; ///< 0 = Sunday
    unsigned hour = 0;
    unsigned minute = 0;
    unsigned second = 0;
    unsigned millis = 0;
};

civil to_civil(time_point t)
{
    // Days are taken in seconds, not in the clock's nanoseconds: the day holding a time near the clock's
    // lower limit (a clamped year-1 date) starts before that limit and does not fit in nanoseconds.
    const auto since_epoch = floor<milliseconds>(t.time_since_epoch());
    const sys_days day{floor<days>(since_epoch)};
    const year_month_day ymd{day};
    const hh_mm_ss hms{since_epoch - day.time_since_epoch()};
    return civil{.year = static_cast<int>(ymd.year()),
                 .month = static_cast<unsigned>(ymd.month()),
                 .day = static_cast<unsigned>(ymd.day()),
                 .weekday = weekday{day}.c_encoding(),
                 .hour = static_cast<unsigned>(hms.hours().count()),
                 .minute = static_cast<unsigned>(hms.minutes().count()),
                 .second = static_cast<unsigned>(hms.seconds().count()),
                 .millis = static_cast<unsigned>(hms.subseconds().count())};
}

/// The time of a UTC calendar date; nullopt for impossible fields (Feb 30, 25:00, a leap second). The
/// clock counts nanoseconds in 64 bits (years 1678..2261), so later or earlier dates are clamped to one
/// second inside its range rather than overflowing; the margin leaves room for a sub-second fraction.
std::optional<time_point> from_civil(int y, unsigned mo, unsigned d, unsigned h, unsigned mi, unsigned s)
{
    const year_month_day ymd{year{y}, month{mo}, day{d}};
    if (!ymd.ok() || h > 23 || mi > 59 || s > 59)
        return std::nullopt;
    const seconds since_epoch = sys_days(ymd).time_since_epoch() + hours(h) + minutes(mi) + seconds(s);
    const seconds lowest = ceil<seconds>(time_point::min().time_since_epoch()) + seconds(1);
    const seconds highest = floor<seconds>(time_point::max().time_since_epoch()) - seconds(1);
    return time_point(duration_cast<time_point::duration>(std::clamp(since_epoch, lowest, highest)));
}

void put_digits(std::string& out, unsigned value, int width)
{
    char buf[8];
    for (int i = width - 1; i >= 0; --i) {
        buf[i] = static_cast<char>('0' + value % 10);
        value /= 10;
    }
    out.append(buf, static_cast<std::size_t>(width));
}

/// A cursor over the text being parsed; every step fails softly by returning false.
class scanner
{
public:
    explicit scanner(std::string_view s) : s_(s) {}

    bool done() const noexcept { return pos_ == s_.size(); }

    bool literal(std::string_view lit)
    {
        if (s_.substr(pos_, lit.size()) != lit)
            return false;
        pos_ += lit.size();
        return true;
    }

    /// Exactly `width` digits.
    bool digits(int width, unsigned& value)
    {
        if (s_.size() - pos_ < static_cast<std::size_t>(width))
            return false;
        value = 0;
        for (int i = 0; i < width; ++i) {
            const char c = s_[pos_ + static_cast<std::size_t>(i)];
            if (c < '0' || c > '9')
                return false;
            value = value * 10 + static_cast<unsigned>(c - '0');
        }
        pos_ += static_cast<std::size_t>(width);
        return true;
    }

    /// One of `names`; its index (0-based) goes to `index`.
    template <std::size_t N>
    bool one_of(const std::array<std::string_view, N>& names, unsigned& index)
    {
        for (std::size_t i = 0; i < N; ++i) {
            if (s_.substr(pos_, names[i].size()) == names[i]) {
                pos_ += names[i].size();
                index = static_cast<unsigned>(i);
                return true;
            }
        }
        return false;
    }

    /// "HH:MM:SS".
    bool clock(unsigned& h, unsigned& m, unsigned& s)
    {
        return digits(2, h) && literal(":") && digits(2, m) && literal(":") && digits(2, s);
    }

    char peek() const noexcept { return pos_ < s_.size() ? s_[pos_] : '\0'; }
    void skip() noexcept { ++pos_; }

private:
    std::string_view s_;
    std::size_t pos_ = 0;
};

std::string_view trim(std::string_view s) noexcept
{
    constexpr std::string_view ws = " \t";
    const auto first = s.find_first_not_of(ws);
    if (first == std::string_view::npos)
        return {};
    return s.substr(first, s.find_last_not_of(ws) - first + 1);
}

// "Sun, 06 Nov 1994 08:49:37 GMT"
std::optional<time_point> parse_imf_fixdate(std::string_view text)
{
    scanner in(text);
    unsigned wd = 0, d = 0, mo = 0, y = 0, h = 0, mi = 0, s = 0;
    if (in.one_of(short_weekdays, wd) && in.literal(", ") && in.digits(2, d) && in.literal(" ") &&
        in.one_of(months, mo) && in.literal(" ") && in.digits(4, y) && in.literal(" ") &&
        in.clock(h, mi, s) && in.literal(" GMT") && in.done())
        return from_civil(static_cast<int>(y), mo + 1, d, h, mi, s);
    return std::nullopt;
}

// "Sunday, 06-Nov-94 08:49:37 GMT"
std::optional<time_point> parse_rfc850(std::string_view text)
{
    scanner in(text);
    unsigned wd = 0, d = 0, mo = 0, yy = 0, h = 0, mi = 0, s = 0;
    if (in.one_of(long_weekdays, wd) && in.literal(", ") && in.digits(2, d) && in.literal("-") &&
        in.one_of(months, mo) && in.literal("-") && in.digits(2, yy) && in.literal(" ") &&
        in.clock(h, mi, s) && in.literal(" GMT") && in.done())
        return from_civil(static_cast<int>(yy < 70 ? 2000 + yy : 1900 + yy), mo + 1, d, h, mi, s);
    return std::nullopt;
}

// "Sun Nov  6 08:49:37 1994"
std::optional<time_point> parse_asctime(std::string_view text)
{
    scanner in(text);
    unsigned wd = 0, d = 0, mo = 0, y = 0, h = 0, mi = 0, s = 0;
    if (!(in.one_of(short_weekdays, wd) && in.literal(" ") && in.one_of(months, mo) && in.literal(" ")))
        return std::nullopt;
    if (in.peek() == ' ') {
        in.skip();
        if (!in.digits(1, d))
            return std::nullopt;
    } else if (!in.digits(2, d)) {
        return std::nullopt;
    }
    if (in.literal(" ") && in.clock(h, mi, s) && in.literal(" ") && in.digits(4, y) && in.done())
        return from_civil(static_cast<int>(y), mo + 1, d, h, mi, s);
    return std::nullopt;
}

} // namespace

std::string format_http_date(time_point t)
{
    const auto c = to_civil(t);
    std::string out;
    out.reserve(29);
    out.append(short_weekdays[c.weekday]).append(", ");
    put_digits(out, c.day, 2);
    out.push_back(' ');
    out.append(months[c.month - 1]).push_back(' ');
    put_digits(out, static_cast<unsigned>(c.year), 4);
    out.push_back(' ');
    put_digits(out, c.hour, 2);
    out.push_back(':');
    put_digits(out, c.minute, 2);
    out.push_back(':');
    put_digits(out, c.second, 2);
    out.append(" GMT");
    return out;
}

std::optional<time_point> parse_http_date(std::string_view text)
{
    text = trim(text);
    if (text.size() < 4)
        return std::nullopt;
    // The character after the weekday tells the forms apart: ',' (IMF), ' ' (asctime), a letter (RFC 850).
    if (text[3] == ',')
        return parse_imf_fixdate(text);
    if (text[3] == ' ')
        return parse_asctime(text);
    return parse_rfc850(text);
}

std::string format_iso8601(time_point t)
{
    const auto c = to_civil(t);
    std::string out;
    out.reserve(24);
    put_digits(out, static_cast<unsigned>(c.year), 4);
    out.push_back('-');
    put_digits(out, c.month, 2);
    out.push_back('-');
    put_digits(out, c.day, 2);
    out.push_back('T');
    put_digits(out, c.hour, 2);
    out.push_back(':');
    put_digits(out, c.minute, 2);
    out.push_back(':');
    put_digits(out, c.second, 2);
    out.push_back('.');
    put_digits(out, c.millis, 3);
    out.push_back('Z');
    return out;
}

std::optional<time_point> parse_iso8601(std::string_view text)
{
    scanner in(text);
    unsigned y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
    if (!(in.digits(4, y) && in.literal("-") && in.digits(2, mo) && in.literal("-") && in.digits(2, d) &&
          in.literal("T") && in.clock(h, mi, s)))
        return std::nullopt;
    nanoseconds fraction{0};
    if (in.literal(".")) {
        long long scale = 100'000'000;
        int count = 0;
        while (in.peek() >= '0' && in.peek() <= '9') {
            if (++count > 9)
                return std::nullopt;
            fraction += nanoseconds((in.peek() - '0') * scale);
            scale /= 10;
            in.skip();
        }
        if (count == 0)
            return std::nullopt;
    }
    if (!(in.literal("Z") && in.done()))
        return std::nullopt;
    auto t = from_civil(static_cast<int>(y), mo, d, h, mi, s);
    if (!t)
        return std::nullopt;
    return *t + duration_cast<time_point::duration>(fraction);
}

std::string format_amz_date(time_point t)
{
    const auto c = to_civil(t);
    std::string out;
    out.reserve(16);
    put_digits(out, static_cast<unsigned>(c.year), 4);
    put_digits(out, c.month, 2);
    put_digits(out, c.day, 2);
    out.push_back('T');
    put_digits(out, c.hour, 2);
    put_digits(out, c.minute, 2);
    put_digits(out, c.second, 2);
    out.push_back('Z');
    return out;
}

std::optional<time_point> parse_amz_date(std::string_view text)
{
    scanner in(text);
    unsigned y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
    if (in.digits(4, y) && in.digits(2, mo) && in.digits(2, d) && in.literal("T") && in.digits(2, h) &&
        in.digits(2, mi) && in.digits(2, s) && in.literal("Z") && in.done())
        return from_civil(static_cast<int>(y), mo, d, h, mi, s);
    return std::nullopt;
}

} // namespace depot
