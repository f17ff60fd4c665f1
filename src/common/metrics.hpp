#pragma once
/// \file
/// Prometheus-style metrics with a cheap hot path. Every time series is created once, at registration, as
/// a child of a named family with fixed label values; code keeps a reference to the child and updates it
/// with relaxed atomic operations only: no allocation, lock or map lookup per update. Rendering (a scrape)
/// takes the registry's mutex and reads the atomics, so a scrape sees each value at some recent point, not
/// one consistent snapshot of all of them (what Prometheus clients generally promise).
///
///     auto& requests = metrics::default_registry().counters("depot_things_total", "Things done.", {"kind"});
///     metrics::counter& big = requests.add({"big"});   // at start-up
///     big.inc();                                        // per request
///
/// Histograms observe unsigned integers in a unit of the caller's choosing (microseconds, bytes) and are
/// rendered divided by a divisor (1e6 turns microseconds into the seconds Prometheus expects).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace depot::metrics {

/// A monotonically increasing count. Thread-safe.
class counter
{
public:
    void inc(std::uint64_t n = 1) noexcept { value_.fetch_add(n, std::memory_order_relaxed); }
    std::uint64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }

private:
    std::atomic<std::uint64_t> value_{0};
};

/// A value that goes up and down. Thread-safe.
class gauge
{
public:
    void add(std::int64_t n = 1) noexcept { value_.fetch_add(n, std::memory_order_relaxed); }
    void sub(std::int64_t n = 1) noexcept { value_.fetch_sub(n, std::memory_order_relaxed); }
    void set(std::int64_t n) noexcept { value_.store(n, std::memory_order_relaxed); }
    std::int64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }

private:
    std::atomic<std::int64_t> value_{0};
};

/// Counts observations into fixed buckets. Bucket counts are stored per bucket and made cumulative when
/// rendered. Thread-safe.
class histogram
{
public:
    /// `bounds`: ascending upper bounds (inclusive, as Prometheus's `le`), in the observation unit; the
    /// +Inf bucket is implicit. The span must outlive the histogram (use a static array).
    explicit histogram(std::span<const std::uint64_t> bounds);

    void observe(std::uint64_t v) noexcept
    {
        std::size_t i = 0;
        while (i < bounds_.size() && v > bounds_[i])
            ++i;
        buckets_[i].fetch_add(1, std::memory_order_relaxed);
        sum_.fetch_add(v, std::memory_order_relaxed);
    }

    std::span<const std::uint64_t> bounds() const noexcept { return bounds_; }
    /// Cumulative counts, one per bound plus the +Inf bucket (whose count is the total).
    std::vector<std::uint64_t> cumulative() const;
    std::uint64_t sum() const noexcept { return sum_.load(std::memory_order_relaxed); }
    std::uint64_t count() const noexcept;

private:
    std::span<const std::uint64_t> bounds_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;
    std::atomic<std::uint64_t> sum_{0};
};

/// Durations in microseconds from 0.5 ms to 60 s, for request, query and storage latencies.
std::span<const std::uint64_t> latency_buckets_us() noexcept;

/// Writes the text exposition format (version 0.0.4). Used by the registry and by scrape-time collectors.
class text_writer
{
public:
    explicit text_writer(std::string& out) : out_(out) {}
    /// `# HELP` and `# TYPE` lines; `type` is "counter", "gauge" or "histogram".
    void family(std::string_view name, std::string_view help, std::string_view type);
    /// One sample: `name{l1="v1",...} value`. `labels` are name/value pairs; values are escaped.
    void sample(std::string_view name,
                std::initializer_list<std::pair<std::string_view, std::string_view>> labels, double value);
    void sample(std::string_view name, std::span<const std::string> label_names,
                std::span<const std::string> label_values, std::string_view extra_label,
                std::string_view extra_value, double value);

    /// A double the way Prometheus expects: shortest round-trip form, "+Inf", "-Inf", "NaN".
    static void append_number(std::string& out, double v);

private:
    std::string& out_;
};

/// A metric family: one name, one help text, fixed label names, and children created by add().
template <class Metric>
class family
{
public:
    struct child
    {
        std::vector<std::string> values;
        Metric metric;
        template <class... Args>
        explicit child(std::vector<std::string> v, Args&&... args)
            : values(std::move(v)), metric(std::forward<Args>(args)...)
        {}
    };

    family(std::string name, std::string help, std::vector<std::string> label_names, std::mutex& mutex,
           std::span<const std::uint64_t> bounds = {}, double divisor = 1)
        : name_(std::move(name)), help_(std::move(help)), label_names_(std::move(label_names)), mutex_(mutex),
          bounds_(bounds), divisor_(divisor)
    {}

    /// The child with these label values (one per label name), created on first use. Takes the registry's
    /// mutex and compares strings: call it at start-up and keep the reference, which stays valid as long as
    /// the registry. Throws std::invalid_argument when the number of values is wrong.
    Metric& add(std::initializer_list<std::string_view> values);

    const std::string& name() const noexcept { return name_; }
    const std::string& help() const noexcept { return help_; }
    const std::vector<std::string>& label_names() const noexcept { return label_names_; }
    double divisor() const noexcept { return divisor_; }
    /// Children in creation order; read under the registry's mutex.
    const std::deque<child>& children() const noexcept { return children_; }

private:
    std::string name_;
    std::string help_;
    std::vector<std::string> label_names_;
    std::mutex& mutex_;
    std::span<const std::uint64_t> bounds_;
    double divisor_;
    std::deque<child> children_; ///< a deque: references to children stay valid as it grows
};

/// Owns metric families and renders them. Families are rendered in registration order, then collectors.
/// Thread-safe.
class registry
{
public:
    registry();
    ~registry();
    registry(const registry&) = delete;
    registry& operator=(const registry&) = delete;

    /// The family of this name, created on first use. Registering a name again with another type or other
    /// label names throws std::invalid_argument (two subsystems disagreeing on a metric is a bug).
    family<counter>& counters(std::string_view name, std::string_view help,
                              std::initializer_list<std::string_view> label_names = {});
    family<gauge>& gauges(std::string_view name, std::string_view help,
                          std::initializer_list<std::string_view> label_names = {});
    /// `bounds` as for histogram (must outlive the registry); samples are rendered divided by `divisor`.
    family<histogram>& histograms(std::string_view name, std::string_view help,
                                  std::initializer_list<std::string_view> label_names,
                                  std::span<const std::uint64_t> bounds, double divisor);

    /// Shorthands for a family without labels and its only child.
    counter& counter_metric(std::string_view name, std::string_view help)
    {
        return counters(name, help).add({});
    }
    gauge& gauge_metric(std::string_view name, std::string_view help) { return gauges(name, help).add({}); }

    /// Appends every family in the text exposition format.
    void render(std::string& out) const;

private:
    struct entry;
    entry& find_or_add(std::string_view name, std::string_view help, std::string_view type,
                       std::initializer_list<std::string_view> label_names);

    mutable std::mutex mutex_;
    std::deque<entry> entries_;
};

/// The process-wide registry that depotd renders at /metrics. Never destroyed.
registry& default_registry();

/// Microseconds elapsed since `start` on the steady clock, for histogram observations.
std::uint64_t micros_since(std::chrono::steady_clock::time_point start) noexcept;

} // namespace depot::metrics
