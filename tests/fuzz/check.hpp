#pragma once
/// \file
/// The invariant check of the fuzz targets: a broken invariant aborts, which libFuzzer reports as a crash
/// and saves the input (crash-<sha1>) like any sanitizer finding.

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond);                \
            std::abort();                                                                                    \
        }                                                                                                    \
    } while (0)
