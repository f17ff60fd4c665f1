#include "options.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <stdexcept>

namespace depot::bench {
namespace {

std::string lower(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

/// Splits "123unit" into the number and the unit; nullopt without digits or on overflow.
std::optional<std::pair<std::uint64_t, std::string>> number_and_unit(std::string_view text)
{
    while (!text.empty() && text.front() == ' ')
        text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ')
        text.remove_suffix(1);
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end == text.data())
        return std::nullopt;
    std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
    while (!unit.empty() && unit.front() == ' ')
        unit.remove_prefix(1);
    return std::pair{value, lower(unit)};
}

} // namespace

std::optional<std::uint64_t> parse_size(std::string_view text)
{
    auto parsed = number_and_unit(text);
    if (!parsed)
        return std::nullopt;
    auto [value, unit] = *parsed;
    static const std::map<std::string, std::uint64_t, std::less<>> units = {
        {"", 1},
        {"b", 1},
        {"k", 1ull << 10},
        {"kib", 1ull << 10},
        {"kb", 1000ull},
        {"m", 1ull << 20},
        {"mib", 1ull << 20},
        {"mb", 1000ull * 1000},
        {"g", 1ull << 30},
        {"gib", 1ull << 30},
        {"gb", 1000ull * 1000 * 1000},
        {"t", 1ull << 40},
        {"tib", 1ull << 40},
        {"tb", 1000ull * 1000 * 1000 * 1000},
    };
    auto it = units.find(unit);
    if (it == units.end())
        return std::nullopt;
    constexpr std::uint64_t max_size = 1ull << 50;
    if (value > max_size / it->second)
        return std::nullopt;
    return value * it->second;
}

std::string format_size(std::uint64_t bytes)
{
    static const char* const names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    while (unit < 4 && bytes != 0 && bytes % 1024 == 0) {
        bytes /= 1024;
        ++unit;
    }
    return std::to_string(bytes) + ' ' + names[unit];
}

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text)
{
    auto parsed = number_and_unit(text);
    if (!parsed || parsed->first == 0)
        return std::nullopt;
    auto [value, unit] = *parsed;
    std::uint64_t ms_per_unit = 0;
    if (unit == "ms")
        ms_per_unit = 1;
    else if (unit.empty() || unit == "s")
        ms_per_unit = 1000;
    else if (unit == "m" || unit == "min")
        ms_per_unit = 60'000;
    else if (unit == "h")
        ms_per_unit = 3'600'000;
    else
        return std::nullopt;
    if (value > (1ull << 40) / ms_per_unit)
        return std::nullopt;
    return std::chrono::milliseconds(value * ms_per_unit);
}

std::string_view workload_name(workload w)
{
    switch (w) {
    case workload::put:
        return "put";
    case workload::get:
        return "get";
    case workload::head:
        return "head";
    case workload::del:
        return "delete";
    case workload::list:
        return "list";
    case workload::mixed:
        return "mixed";
    case workload::multipart:
        return "multipart";
    case workload::storm:
        return "storm";
    }
    return "?";
}

std::optional<workload> parse_workload(std::string_view name)
{
    for (auto w : {workload::put, workload::get, workload::head, workload::del, workload::list,
                   workload::mixed, workload::multipart, workload::storm})
        if (workload_name(w) == name)
            return w;
    return std::nullopt;
}

std::optional<mix_weights> parse_mix(std::string_view text)
{
    mix_weights mix;
    while (!text.empty()) {
        auto comma = text.find(',');
        auto item = text.substr(0, comma);
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
        auto eq = item.find('=');
        if (eq == std::string_view::npos)
            return std::nullopt;
        auto name = item.substr(0, eq);
        auto number = item.substr(eq + 1);
        unsigned value = 0;
        auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
        if (ec != std::errc() || end != number.data() + number.size() || value > 1'000'000)
            return std::nullopt;
        if (name == "get")
            mix.get = value;
        else if (name == "put")
            mix.put = value;
        else if (name == "head")
            mix.head = value;
        else if (name == "delete")
            mix.del = value;
        else
            return std::nullopt;
    }
    if (mix.total() == 0)
        return std::nullopt;
    return mix;
}

const char* const usage_text = R"(Usage: depot-bench WORKLOAD [options]

An S3 load generator: keep-alive connections, one coroutine per client, SigV4 (UNSIGNED-PAYLOAD bodies,
generated on the fly). Prints ops/s, MB/s (10^6 bytes), latency and time-to-first-byte percentiles.

Workloads:
  put        PutObject of new keys
  get        GetObject of prepared keys (--range-size: a random range of each)
  head       HeadObject of prepared keys
  delete     DeleteObject of prepared keys, each once
  list       full paginated ListObjectsV2 listings of --objects prepared keys (--page-size per page)
  mixed      get/put/head/delete by --mix weights over a pool of prepared keys
  multipart  multipart uploads of --size objects in --part-size parts
  storm      the scale-out pull: --concurrency replicas start together and each reads all --objects
             prepared keys (default 8) of --size once, in the same order; "pull" is one replica's whole
             read (its latency percentiles are the time to pull the model), "get" each file

Target:
  --endpoint URL        http://host:port (default http://127.0.0.1:9000)
  --access-key ID       or AWS_ACCESS_KEY_ID
  --secret-key SECRET   or AWS_SECRET_ACCESS_KEY
  --region R            default us-east-1
  --bucket B            created when missing (default bench)
  --prefix P            key prefix (default depot-bench); keys are P/o<number>

Load:
  --size SIZE           object size: 4KiB, 64MiB, 1GiB, ... (default 4KiB)
  --concurrency N       clients, each with its own connection (default 8)
  --prepare-concurrency N  clients writing the prepared keys (default: --concurrency)
  --duration D          run this long: 500ms, 15s, 2m (default 15s)
  --ops N               run exactly N operations instead (list: N pages)
  --objects N           keys prepared before get/head/delete/list/mixed (default: enough for the run)
  --skip-prepare        the --objects keys exist already (written by an earlier run with the same prefix)
  --content random|fixed  random: every object differs; fixed: all objects identical (dedup) (default random)
  --range-size SIZE     get: read a random range of this many bytes instead of the whole object
  --part-size SIZE      multipart part size (default 16MiB)
  --page-size N         list: max-keys (default 1000)
  --mix SPEC            mixed weights, default get=60,put=20,head=10,delete=10
  --cleanup             delete the keys this run created afterwards (not measured)
  --timeout D           per request (default 300s)
  --seed N              random seed (default 1)

Output:
  --json FILE           also write the report as JSON
  --label TEXT          name of the target in the report (e.g. depot, radosgw)
  --quiet               no progress lines on stderr
)";

options parse_options(const std::vector<std::string>& args, bool& help)
{
    options o;
    help = false;
    if (auto* k = std::getenv("AWS_ACCESS_KEY_ID"))
        o.access_key = k;
    if (auto* s = std::getenv("AWS_SECRET_ACCESS_KEY"))
        o.secret_key = s;
    bool have_workload = false;
    auto bad = [](const std::string& flag, const std::string& value) {
        return std::invalid_argument("bad value for " + flag + ": '" + value + "'");
    };
    auto to_u64 = [&](const std::string& flag, const std::string& value) {
        std::uint64_t n = 0;
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
        if (ec != std::errc() || end != value.data() + value.size())
            throw bad(flag, value);
        return n;
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--help" || a == "-h") {
            help = true;
            return o;
        }
        if (a == "--cleanup") {
            o.cleanup = true;
            continue;
        }
        if (a == "--skip-prepare") {
            o.skip_prepare = true;
            continue;
        }
        if (a == "--quiet") {
            o.quiet = true;
            continue;
        }
        if (a.rfind("--", 0) != 0) {
            if (have_workload)
                throw std::invalid_argument("unexpected argument '" + a + "'");
            auto w = parse_workload(a);
            if (!w)
                throw std::invalid_argument("unknown workload '" + a + "'");
            o.kind = *w;
            have_workload = true;
            continue;
        }
        std::string flag = a, value;
        if (auto eq = a.find('='); eq != std::string::npos) {
            flag = a.substr(0, eq);
            value = a.substr(eq + 1);
        } else {
            if (i + 1 >= args.size())
                throw std::invalid_argument(flag + " needs a value");
            value = args[++i];
        }
        if (flag == "--endpoint")
            o.endpoint = value;
        else if (flag == "--access-key")
            o.access_key = value;
        else if (flag == "--secret-key")
            o.secret_key = value;
        else if (flag == "--region")
            o.region = value;
        else if (flag == "--bucket")
            o.bucket = value;
        else if (flag == "--prefix")
            o.prefix = value;
        else if (flag == "--size") {
            auto s = parse_size(value);
            if (!s)
                throw bad(flag, value);
            o.size = *s;
        } else if (flag == "--part-size") {
            auto s = parse_size(value);
            if (!s || *s == 0)
                throw bad(flag, value);
            o.part_size = *s;
        } else if (flag == "--range-size") {
            auto s = parse_size(value);
            if (!s || *s == 0)
                throw bad(flag, value);
            o.range_size = *s;
        } else if (flag == "--concurrency") {
            auto n = to_u64(flag, value);
            if (n == 0 || n > 10000)
                throw bad(flag, value);
            o.concurrency = static_cast<unsigned>(n);
        } else if (flag == "--prepare-concurrency") {
            auto n = to_u64(flag, value);
            if (n == 0 || n > 10000)
                throw bad(flag, value);
            o.prepare_concurrency = static_cast<unsigned>(n);
        } else if (flag == "--duration") {
            auto d = parse_duration(value);
            if (!d)
                throw bad(flag, value);
            o.duration = *d;
        } else if (flag == "--ops")
            o.ops = to_u64(flag, value);
        else if (flag == "--objects")
            o.objects = to_u64(flag, value);
        else if (flag == "--page-size") {
            auto n = to_u64(flag, value);
            if (n == 0 || n > 1000)
                throw bad(flag, value);
            o.page_size = static_cast<unsigned>(n);
        } else if (flag == "--content") {
            if (value == "random")
                o.content = content_kind::random;
            else if (value == "fixed")
                o.content = content_kind::fixed;
            else
                throw bad(flag, value);
        } else if (flag == "--mix") {
            auto m = parse_mix(value);
            if (!m)
                throw bad(flag, value);
            o.mix = *m;
        } else if (flag == "--timeout") {
            auto d = parse_duration(value);
            if (!d)
                throw bad(flag, value);
            o.timeout = std::chrono::duration_cast<std::chrono::seconds>(*d);
            if (o.timeout.count() == 0)
                o.timeout = std::chrono::seconds(1);
        } else if (flag == "--seed")
            o.seed = to_u64(flag, value);
        else if (flag == "--json")
            o.json_file = value;
        else if (flag == "--label")
            o.label = value;
        else
            throw std::invalid_argument("unknown option " + flag);
    }
    if (!have_workload)
        throw std::invalid_argument("no workload given");
    constexpr std::string_view scheme = "http://";
    if (o.endpoint.rfind(scheme, 0) != 0)
        throw std::invalid_argument("--endpoint must start with http:// (TLS is not supported)");
    std::string hostport = o.endpoint.substr(scheme.size());
    while (!hostport.empty() && hostport.back() == '/')
        hostport.pop_back();
    auto colon = hostport.rfind(':');
    if (colon == std::string::npos || hostport.find('/') != std::string::npos) {
        o.host = hostport;
        o.port = "80";
    } else {
        o.host = hostport.substr(0, colon);
        o.port = hostport.substr(colon + 1);
    }
    if (o.host.empty() || o.port.empty())
        throw std::invalid_argument("bad --endpoint '" + o.endpoint + "'");
    if (o.access_key.empty() || o.secret_key.empty())
        throw std::invalid_argument("credentials missing: --access-key/--secret-key or AWS_ACCESS_KEY_ID/"
                                    "AWS_SECRET_ACCESS_KEY");
    if (o.kind == workload::multipart && o.size == 0)
        throw std::invalid_argument("multipart needs --size above 0");
    return o;
}

} // namespace depot::bench
