// depot-hash-bench: the CPU cost of each digest an upload computes, in seconds of CPU per GB, for every
// implementation this CPU runs. The ingest path (src/registry/service/content.cpp) computes MD5 (the ETag)
// and CRC64NVME always, SHA-256 of the whole body for an object's identity, SHA-256 of each 8 MiB dedup piece
// when a body is more than one piece, and the client's flexible checksum; this prints what each costs and
// what a PutObject and an UploadPart of a given size cost in digests with dedup on.
//
//   depot-hash-bench [--size SIZE]    bytes hashed per measurement (default 256MiB)
//
// Measured as thread CPU time over a 1 MiB buffer hashed repeatedly (the size of a read from the socket).
#include "common/crc.hpp"
#include "common/hash.hpp"
#include "options.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace depot;

namespace {

double thread_cpu_seconds()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

} // namespace

int main(int argc, char** argv)
{
    std::uint64_t total = 256ull << 20;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
            auto size = bench::parse_size(argv[++i]);
            if (!size || *size == 0) {
                std::fprintf(stderr, "depot-hash-bench: bad --size\n");
                return 2;
            }
            total = *size;
        } else {
            std::fprintf(stderr, "usage: depot-hash-bench [--size SIZE]\n");
            return 2;
        }
    }
    std::vector<std::byte> buffer(1 << 20);
    std::mt19937_64 rng(1);
    for (auto& b : buffer)
        b = static_cast<std::byte>(rng());
    const std::span<const std::byte> block(buffer);
    const std::uint64_t rounds = std::max<std::uint64_t>(1, total / buffer.size());
    const double gb = static_cast<double>(rounds * buffer.size()) / 1e9;
    std::uint64_t sink = 0;

    struct component
    {
        std::string name;
        double s_per_gb = 0;
    };
    std::vector<component> measured;
    auto measure = [&](std::string name, const std::function<void(std::span<const std::byte>)>& update) {
        const double start = thread_cpu_seconds();
        for (std::uint64_t r = 0; r < rounds; ++r)
            update(block);
        const double s = (thread_cpu_seconds() - start) / gb;
        std::printf("%-26s %7.3f s/GB  %8.0f MB/s\n", name.c_str(), s, 1e3 / s);
        measured.push_back({std::move(name), s});
        return s;
    };
    auto digest = [&](digest_kind kind) {
        return [&, kind](std::span<const std::byte> data) {
            hasher h(kind);
            h.update(data);
            sink += static_cast<unsigned char>(h.finish()[0]);
        };
    };
    const double md5_s = measure("md5 (OpenSSL)", digest(digest_kind::md5));
    const double sha256_s = measure("sha256 (OpenSSL)", digest(digest_kind::sha256));
    measure("sha1 (OpenSSL)", digest(digest_kind::sha1));
    double crc64_s = 0;
    using crc_detail::crc_kind;
    using crc_detail::crc_path;
    for (auto [path, path_name] :
         {std::pair{crc_path::portable, "table"}, std::pair{crc_path::pclmul, "pclmul"},
          std::pair{crc_path::vpclmul, "vpclmul"}}) {
        if (!crc_detail::available(path))
            continue;
        for (auto [kind, kind_name] :
             {std::pair{crc_kind::crc32, "crc32"}, std::pair{crc_kind::crc32c, "crc32c"},
              std::pair{crc_kind::crc64nvme, "crc64nvme"}}) {
            const double s = measure(std::string(kind_name) + " (" + path_name + ")",
                                     [&, path, kind](std::span<const std::byte> d) {
                                         sink += crc_detail::compute(path, kind, d, 0);
                                     });
            if (kind == crc_kind::crc64nvme)
                crc64_s = s; // the last one measured is the fastest path, the one depotd uses
        }
    }
    std::printf(
        "\ndigests per GB uploaded, dedup on (8 MiB pieces), no flexible checksum from the client:\n");
    std::printf("%-44s %7.3f s/GB\n", "PutObject <= 8 MiB (md5, sha256, crc64)", md5_s + sha256_s + crc64_s);
    std::printf("%-44s %7.3f s/GB\n", "PutObject > 8 MiB (+ sha256 per piece)",
                md5_s + 2 * sha256_s + crc64_s);
    std::printf("%-44s %7.3f s/GB\n", "UploadPart 8 MiB (its one piece's sha256)",
                md5_s + sha256_s + crc64_s);
    std::printf("%-44s %7.3f s/GB\n", "UploadPart > 8 MiB (sha256 per piece only)",
                md5_s + sha256_s + crc64_s);
    std::printf("(sink %llu)\n", static_cast<unsigned long long>(sink % 10));
    return 0;
}
