// depotd: the Depot server. See `depotd --help`.
#include "common/log.hpp"
#include "config/options.hpp"
#include "server/api/api.hpp"
#include "server/server.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <malloc.h>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace {

/// Hands freed heap memory back to the kernel every `period`, on a thread of its own (malloc_trim walks every
/// arena under that arena's lock; an I/O thread would stall meanwhile).
class heap_trimmer
{
public:
    explicit heap_trimmer(std::chrono::milliseconds period)
        : thread_([period](std::stop_token stop) {
              std::mutex m;
              std::condition_variable_any wake;
              std::unique_lock lock(m);
              while (!stop.stop_requested()) {
                  wake.wait_for(lock, stop, period, [] { return false; });
                  if (!stop.stop_requested())
                      malloc_trim(0);
              }
          })
    {}

private:
    std::jthread thread_;
};

} // namespace

int main(int argc, char** argv)
{
    // RADOS stripes (4 MiB) come from the heaps, and freed memory goes back to the kernel four times a
    // second. Mapped fresh for every stripe (glibc's default for blocks this large, or any threshold below
    // the stripe), each one costs a page fault per 4 KiB as librados receives into it or we fill it: 13 %
    // of depotd's CPU in 4 MiB GETs went to faults in librados's receive path. Reused from the heaps but
    // never trimmed, freed stripes pile up in the per-thread arenas (16 concurrent 128 MiB uploads peaked at
    // 364 MiB resident). Measured with depot-bench against the RADOS store, same binary, 2 cores:
    //   mmap threshold   trim        4 MiB GET x8          16 x 128 MiB multipart    peak RSS (multipart)
    //   2 MiB            -           461 MB/s, 4.5 ms CPU  276 MB/s                  105 MiB
    //   8 MiB            -           488 MB/s, 3.2 ms CPU  343 MB/s                  269 MiB
    //   8 MiB            every 250ms 499 MB/s, 3.1 ms CPU  374 MB/s                  151 MiB
    // (CPU: depotd's per object). An explicit threshold also stops glibc from raising it by itself.
    // No-ops under the sanitizers, which bring their own allocator.
    mallopt(M_MMAP_THRESHOLD, 8 << 20);
    std::vector<std::string> args(argv + 1, argv + argc);
    // The REST API's routes, one "METHOD /api/v1/path" per line: the test comparing the server with
    // openapi/openapi.yaml reads them.
    if (args.size() == 1 && args[0] == "--print-api-routes") {
        for (const auto& r : depot::server::api::route_list())
            std::printf("%s\n", r.c_str());
        return 0;
    }
    if (args.size() == 1 && args[0] == "--version") {
        std::printf("depotd %s\n", DEPOT_VERSION);
        return 0;
    }
    bool help = false;
    auto opts = depot::config::parse_options(args, help);
    if (help) {
        std::fputs(depot::config::options_help().c_str(), stdout);
        return 0;
    }
    if (!opts) {
        std::fprintf(stderr, "depotd: %s\n", opts.error().message.c_str());
        return 2;
    }
    try {
        heap_trimmer trimmer(std::chrono::milliseconds(250));
        depot::server::run(*opts);
    } catch (const std::exception& e) {
        depot::log::error("depotd cannot start", {{"error", e.what()}});
        return 1;
    }
    return 0;
}
