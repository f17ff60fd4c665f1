#pragma once
/// \file
/// depot-bench's command line: workload, target, sizes and durations. Pure code (no I/O), unit-tested.
///
/// Sizes: an integer with an optional unit, case-insensitive: B, KiB/MiB/GiB/TiB (powers of 1024), K/M/G/T
/// (also powers of 1024, as dd and rados bench read them) and KB/MB/GB/TB (powers of 1000): "4KiB",
/// "64MiB", "1GiB", "4096". Durations: an integer with ms, s, m or h ("500ms", "15s", "2m"); a bare number
/// is seconds.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::bench {

/// Parses a size; nullopt on an empty string, a fraction, an unknown unit or a value above 2^50 bytes.
std::optional<std::uint64_t> parse_size(std::string_view text);

/// Formats a size the way parse_size reads it back, with the largest exact binary unit ("64 MiB").
std::string format_size(std::uint64_t bytes);

/// Parses a duration; nullopt when malformed, negative or zero.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

enum class workload
{
    put,       ///< PutObject of new keys
    get,       ///< GetObject of prepared keys (whole objects, or ranges with --range-size)
    head,      ///< HeadObject of prepared keys
    del,       ///< DeleteObject of prepared keys (each key once)
    list,      ///< full paginated ListObjectsV2 listings of the prepared keys
    mixed,     ///< get/put/head/delete by ratio over a pool of prepared keys
    multipart, ///< multipart uploads (CreateMultipartUpload, UploadPart..., CompleteMultipartUpload)
    storm,     ///< every client reads all prepared keys once, all starting together (a scale-out pull)
};

std::string_view workload_name(workload w);
std::optional<workload> parse_workload(std::string_view name);

enum class content_kind
{
    random, ///< every object different (a random pool stamped with the object and chunk number)
    fixed,  ///< every object the same bytes: exercises content deduplication
};

/// Weights of the mixed workload, e.g. "get=60,put=20,head=10,delete=10".
struct mix_weights
{
    unsigned get = 0;
    unsigned put = 0;
    unsigned head = 0;
    unsigned del = 0;
    unsigned total() const { return get + put + head + del; }
};

/// nullopt when a name is unknown, a weight is not an integer, or all weights are zero.
std::optional<mix_weights> parse_mix(std::string_view text);

struct options
{
    workload kind = workload::put;
    std::string endpoint = "http://127.0.0.1:9000"; ///< http://host:port
    std::string host;                               ///< derived from endpoint
    std::string port;                               ///< derived from endpoint
    std::string access_key;
    std::string secret_key;
    std::string region = "us-east-1";
    std::string bucket = "bench";
    std::string prefix = "depot-bench";
    std::uint64_t size = 4096;                  ///< object size
    std::uint64_t part_size = 16 * 1024 * 1024; ///< multipart part size
    std::optional<std::uint64_t> range_size;    ///< GET of this many bytes at a random offset
    unsigned concurrency = 8;                   ///< connections, one coroutine each
    unsigned prepare_concurrency = 0;           ///< clients of the prepare phase (0: `concurrency`)
    std::chrono::milliseconds duration{15000};  ///< used when ops == 0
    std::uint64_t ops = 0;                      ///< operations to run (0: run for `duration`)
    std::uint64_t objects = 0;                  ///< prepared keys (get/head/delete/list/mixed); 0: default
    unsigned page_size = 1000;                  ///< list: max-keys per page
    content_kind content = content_kind::random;
    mix_weights mix{.get = 60, .put = 20, .head = 10, .del = 10};
    bool cleanup = false;              ///< delete every key this run created, after the measurement
    bool skip_prepare = false;         ///< the keys prefix/o0..objects-1 exist already (from an earlier run)
    std::chrono::seconds timeout{300}; ///< per request
    std::uint64_t seed = 1;
    std::string json_file;
    std::string label; ///< free text copied to the report, e.g. "depot" or "radosgw"
    bool quiet = false;
};

/// Parses argv (without the program name). Throws std::invalid_argument with a message naming the bad flag.
/// "--help" sets `help` and returns defaults.
options parse_options(const std::vector<std::string>& args, bool& help);

/// The usage text.
extern const char* const usage_text;

} // namespace depot::bench
