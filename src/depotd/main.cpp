// depotd: the Depot server. See `depotd --help`.
#include "common/log.hpp"
#include "server/api/api.hpp"
#include "server/options.hpp"
#include "server/server.hpp"

#include <cstdio>
#include <exception>
#include <malloc.h>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
    // Blocks of 2 MiB and more (RADOS stripes are 4 MiB) are mapped and unmapped, not carved from the heaps.
    // glibc otherwise raises its mmap threshold to the size of the largest block freed, after which every
    // stripe comes from one of the per-thread arenas and freed ones stay there: 16 concurrent uploads
    // peaked at 364 MiB resident, 111 MiB with this (same throughput), measured with depot-bench
    // multipart 16 x 128 MiB against the RADOS store; an explicit threshold also turns that raising off.
    // A no-op under the sanitizers, which bring their own allocator.
    mallopt(M_MMAP_THRESHOLD, 2 << 20);
    std::vector<std::string> args(argv + 1, argv + argc);
    // The REST API's routes, one "METHOD /api/v1/path" per line: the test comparing the server with
    // openapi/openapi.yaml reads them.
    if (args.size() == 1 && args[0] == "--print-api-routes") {
        for (const auto& r : depot::server::api::route_list())
            std::printf("%s\n", r.c_str());
        return 0;
    }
    bool help = false;
    auto opts = depot::server::parse_options(args, help);
    if (help) {
        std::fputs(depot::server::options_help().c_str(), stdout);
        return 0;
    }
    if (!opts) {
        std::fprintf(stderr, "depotd: %s\n", opts.error().message.c_str());
        return 2;
    }
    try {
        depot::server::run(*opts);
    } catch (const std::exception& e) {
        depot::log::error("depotd cannot start", {{"error", e.what()}});
        return 1;
    }
    return 0;
}
