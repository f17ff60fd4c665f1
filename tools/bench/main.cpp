// depot-bench: an S3 load generator for Depot, radosgw or any S3 endpoint (see options.cpp for the usage).
#include "options.hpp"
#include "stats.hpp"
#include "workloads.hpp"

#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>

int main(int argc, char** argv)
{
    using namespace depot::bench;
    options opts;
    try {
        bool help = false;
        opts = parse_options(std::vector<std::string>(argv + 1, argv + argc), help);
        if (help) {
            std::fputs(usage_text, stdout);
            return 0;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "depot-bench: %s\n(see depot-bench --help)\n", e.what());
        return 2;
    }
    try {
        auto report = run_workload(opts);
        std::fputs(to_table(report).c_str(), stdout);
        if (!opts.json_file.empty()) {
            std::ofstream out(opts.json_file);
            out << boost::json::serialize(to_json(report)) << '\n';
            if (!out)
                throw std::runtime_error("cannot write " + opts.json_file);
        }
        std::uint64_t errors = 0;
        for (const auto& [name, s] : report.ops)
            errors += s.errors;
        return errors == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "depot-bench: %s\n", e.what());
        return 1;
    }
}
