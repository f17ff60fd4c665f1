#pragma once
/// \file
/// The blob_store conformance suite: every contract of storage/blob_store.hpp, written once and run against
/// every store. A store joins with one line in its test file:
///
///     DEPOT_BLOB_STORE_CONFORMANCE("memory", [] { return depot::storage::make_memory_blob_store(); })
///
/// This defines one doctest test case per store with one subcase per contract, so a single contract can be
/// selected with `-sc="*ranged*"` and a single store with `-tc="*localfs*"`. The factory is called once per
/// subcase and must return a fresh, empty store; the store is destroyed when the subcase ends, so a factory
/// that creates resources (a temporary directory, a RADOS pool) releases them in the shared_ptr's deleter.
/// A factory may return nullptr to skip the suite, e.g. a RADOS store when no cluster is configured:
///
///     DEPOT_BLOB_STORE_CONFORMANCE("rados", []() -> std::shared_ptr<depot::storage::blob_store> {
///         const char* conf = std::getenv("DEPOT_TEST_CEPH_CONF");
///         if (!conf)
///             return nullptr;
///         // A fresh namespace per store keeps each check's store empty.
///         return depot::storage::make_rados_blob_store({.conf_file = conf, .ns = "t" + random_hex()});
///     })
///
/// Checks run their coroutines on a private io_context in the test thread (one check uses 4 threads), so a
/// store must not assume it is called from any particular executor.

#include "storage/blob_store.hpp"

#include <doctest/doctest.h>
#include <functional>
#include <memory>

namespace depot::storage::testing {

/// Makes a fresh, empty store, or nullptr when the store is not available in this environment.
using store_factory = std::function<std::shared_ptr<blob_store>()>;

/// Runs every conformance check as a doctest subcase against stores made by `factory`. Call it from a
/// TEST_CASE body (DEPOT_BLOB_STORE_CONFORMANCE does).
void run_conformance(const store_factory& factory);

} // namespace depot::storage::testing

/// Registers the conformance suite for one store. `name` is a string literal; the rest is the factory.
#define DEPOT_BLOB_STORE_CONFORMANCE(name, ...)                                                              \
    TEST_CASE("the " name " blob store meets every blob_store contract")                                     \
    {                                                                                                        \
        ::depot::storage::testing::run_conformance(__VA_ARGS__);                                             \
    }
