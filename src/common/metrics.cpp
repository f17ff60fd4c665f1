#include "common/metrics.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <type_traits>

namespace depot::metrics {
namespace {

void append_escaped_label(std::string& out, std::string_view v)
{
    for (char c : v) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out.push_back(c);
    }
}

void append_escaped_help(std::string& out, std::string_view v)
{
    for (char c : v) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '\n')
            out += "\\n";
        else
            out.push_back(c);
    }
}

constexpr std::array<std::uint64_t, 16> latency_us = {
    500,     1'000,   2'500,     5'000,     10'000,    25'000,     50'000,     100'000,
    250'000, 500'000, 1'000'000, 2'500'000, 5'000'000, 10'000'000, 30'000'000, 60'000'000};

} // namespace

histogram::histogram(std::span<const std::uint64_t> bounds)
    : bounds_(bounds), buckets_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds.size() + 1))
{
    for (std::size_t i = 0; i <= bounds.size(); ++i)
        buckets_[i].store(0, std::memory_order_relaxed);
}

std::vector<std::uint64_t> histogram::cumulative() const
{
    std::vector<std::uint64_t> out(bounds_.size() + 1);
    std::uint64_t running = 0;
    for (std::size_t i = 0; i <= bounds_.size(); ++i) {
        running += buckets_[i].load(std::memory_order_relaxed);
        out[i] = running;
    }
    return out;
}

std::uint64_t histogram::count() const noexcept
{
    std::uint64_t total = 0;
    for (std::size_t i = 0; i <= bounds_.size(); ++i)
        total += buckets_[i].load(std::memory_order_relaxed);
    return total;
}

std::span<const std::uint64_t> latency_buckets_us() noexcept
{
    return latency_us;
}

void text_writer::append_number(std::string& out, double v)
{
    if (std::isnan(v)) {
        out += "NaN";
        return;
    }
    if (std::isinf(v)) {
        out += v > 0 ? "+Inf" : "-Inf";
        return;
    }
    // Plain decimals where they are short ("0.0005", not "5e-04", for bucket bounds); exponents beyond.
    char buf[64];
    const double magnitude = std::fabs(v);
    const bool plain = magnitude == 0 || (magnitude >= 1e-6 && magnitude < 1e15);
    auto [end, ec] = plain ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed)
                           : std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, ec == std::errc() ? end : buf);
}

void text_writer::family(std::string_view name, std::string_view help, std::string_view type)
{
    out_ += "# HELP ";
    out_ += name;
    out_.push_back(' ');
    append_escaped_help(out_, help);
    out_ += "\n# TYPE ";
    out_ += name;
    out_.push_back(' ');
    out_ += type;
    out_.push_back('\n');
}

void text_writer::sample(std::string_view name,
                         std::initializer_list<std::pair<std::string_view, std::string_view>> labels,
                         double value)
{
    out_ += name;
    if (labels.size() != 0) {
        out_.push_back('{');
        bool first = true;
        for (const auto& [n, v] : labels) {
            if (!first)
                out_.push_back(',');
            first = false;
            out_ += n;
            out_ += "=\"";
            append_escaped_label(out_, v);
            out_.push_back('"');
        }
        out_.push_back('}');
    }
    out_.push_back(' ');
    append_number(out_, value);
    out_.push_back('\n');
}

void text_writer::sample(std::string_view name, std::span<const std::string> label_names,
                         std::span<const std::string> label_values, std::string_view extra_label,
                         std::string_view extra_value, double value)
{
    out_ += name;
    if (!label_names.empty() || !extra_label.empty()) {
        out_.push_back('{');
        for (std::size_t i = 0; i < label_names.size(); ++i) {
            if (i != 0)
                out_.push_back(',');
            out_ += label_names[i];
            out_ += "=\"";
            append_escaped_label(out_, label_values[i]);
            out_.push_back('"');
        }
        if (!extra_label.empty()) {
            if (!label_names.empty())
                out_.push_back(',');
            out_ += extra_label;
            out_ += "=\"";
            append_escaped_label(out_, extra_value);
            out_.push_back('"');
        }
        out_.push_back('}');
    }
    out_.push_back(' ');
    append_number(out_, value);
    out_.push_back('\n');
}

template <class Metric>
Metric& family<Metric>::add(std::initializer_list<std::string_view> values)
{
    if (values.size() != label_names_.size())
        throw std::invalid_argument("metric " + name_ + ": expected " + std::to_string(label_names_.size()) +
                                    " label values, got " + std::to_string(values.size()));
    std::lock_guard lock(mutex_);
    for (auto& c : children_) {
        bool same = true;
        std::size_t i = 0;
        for (auto it = values.begin(); it != values.end() && same; ++it, ++i)
            same = c.values[i] == *it;
        if (same)
            return c.metric;
    }
    std::vector<std::string> v(values.begin(), values.end());
    if constexpr (std::is_same_v<Metric, histogram>)
        return children_.emplace_back(std::move(v), bounds_).metric;
    else
        return children_.emplace_back(std::move(v)).metric;
}

template class family<counter>;
template class family<gauge>;
template class family<histogram>;

struct registry::entry
{
    std::string name;
    std::string type;
    std::vector<std::string> label_names;
    std::unique_ptr<family<counter>> counters;
    std::unique_ptr<family<gauge>> gauges;
    std::unique_ptr<family<histogram>> histograms;
};

registry::registry() = default;
registry::~registry() = default;

registry::entry& registry::find_or_add(std::string_view name, std::string_view help, std::string_view type,
                                       std::initializer_list<std::string_view> label_names)
{
    std::vector<std::string> labels(label_names.begin(), label_names.end());
    for (auto& e : entries_) {
        if (e.name != name)
            continue;
        if (e.type != type || e.label_names != labels)
            throw std::invalid_argument("metric " + std::string(name) +
                                        " registered twice with different types or labels");
        return e;
    }
    auto& e = entries_.emplace_back();
    e.name = name;
    e.type = type;
    e.label_names = labels;
    (void)help;
    return e;
}

family<counter>& registry::counters(std::string_view name, std::string_view help,
                                    std::initializer_list<std::string_view> label_names)
{
    std::lock_guard lock(mutex_);
    auto& e = find_or_add(name, help, "counter", label_names);
    if (!e.counters)
        e.counters =
            std::make_unique<family<counter>>(std::string(name), std::string(help), e.label_names, mutex_);
    return *e.counters;
}

family<gauge>& registry::gauges(std::string_view name, std::string_view help,
                                std::initializer_list<std::string_view> label_names)
{
    std::lock_guard lock(mutex_);
    auto& e = find_or_add(name, help, "gauge", label_names);
    if (!e.gauges)
        e.gauges =
            std::make_unique<family<gauge>>(std::string(name), std::string(help), e.label_names, mutex_);
    return *e.gauges;
}

family<histogram>& registry::histograms(std::string_view name, std::string_view help,
                                        std::initializer_list<std::string_view> label_names,
                                        std::span<const std::uint64_t> bounds, double divisor)
{
    std::lock_guard lock(mutex_);
    auto& e = find_or_add(name, help, "histogram", label_names);
    if (!e.histograms)
        e.histograms = std::make_unique<family<histogram>>(std::string(name), std::string(help),
                                                           e.label_names, mutex_, bounds, divisor);
    return *e.histograms;
}

void registry::render(std::string& out) const
{
    text_writer w(out);
    std::lock_guard lock(mutex_);
    for (const auto& e : entries_) {
        if (e.counters) {
            const auto& f = *e.counters;
            w.family(f.name(), f.help(), "counter");
            for (const auto& c : f.children())
                w.sample(f.name(), f.label_names(), c.values, "", "", static_cast<double>(c.metric.value()));
        } else if (e.gauges) {
            const auto& f = *e.gauges;
            w.family(f.name(), f.help(), "gauge");
            for (const auto& c : f.children())
                w.sample(f.name(), f.label_names(), c.values, "", "", static_cast<double>(c.metric.value()));
        } else if (e.histograms) {
            const auto& f = *e.histograms;
            w.family(f.name(), f.help(), "histogram");
            const std::string bucket = f.name() + "_bucket";
            const std::string sum = f.name() + "_sum";
            const std::string count = f.name() + "_count";
            for (const auto& c : f.children()) {
                auto cumulative = c.metric.cumulative();
                auto bounds = c.metric.bounds();
                std::string le;
                for (std::size_t i = 0; i < cumulative.size(); ++i) {
                    le.clear();
                    if (i < bounds.size())
                        text_writer::append_number(le, static_cast<double>(bounds[i]) / f.divisor());
                    else
                        le = "+Inf";
                    w.sample(bucket, f.label_names(), c.values, "le", le, static_cast<double>(cumulative[i]));
                }
                // The count is the +Inf bucket's, so the two always agree within one scrape.
                w.sample(sum, f.label_names(), c.values, "", "",
                         static_cast<double>(c.metric.sum()) / f.divisor());
                w.sample(count, f.label_names(), c.values, "", "", static_cast<double>(cumulative.back()));
            }
        }
    }
}

registry& default_registry()
{
    static auto* r = new registry(); // never destroyed: metrics may be updated during static destruction
    return *r;
}

std::uint64_t micros_since(std::chrono::steady_clock::time_point start) noexcept
{
    auto d = std::chrono::steady_clock::now() - start;
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
}

} // namespace depot::metrics
