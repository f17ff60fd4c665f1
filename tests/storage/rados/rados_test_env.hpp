#pragma once
/// \file
/// The Ceph cluster the RADOS tests run against, and a plain librados client to look behind the store's
/// back (count objects, read their sizes, remove some by hand).
///
/// The tests need a cluster: `scripts/ceph-dev start DIR && source DIR/env` sets DEPOT_TEST_CEPH_CONF and
/// DEPOT_TEST_CEPH_POOL (optionally DEPOT_TEST_CEPH_USER, DEPOT_TEST_CEPH_KEYRING). Without them:
/// - the test case "the RADOS blob store tests have a Ceph cluster to run against" FAILS, naming the
///   variables, so a run without Ceph never looks like a passing RADOS store;
/// - unless DEPOT_TEST_SKIP_CEPH=1 says that is intended: that case then passes with a warning;
/// - either way every other RADOS test case is reported as skipped (doctest's "skipped" count), and the
///   conformance suite's factory returns nullptr (its case passes with a "skipped" message).
/// Every store a test makes gets a fresh random RADOS namespace in the pool, emptied afterwards.

#include "storage/rados/rados_blob_store.hpp"

#include <memory>
#include <mutex>
#include <optional>
#include <rados/librados.hpp>
#include <string>
#include <vector>

namespace depot::storage::testing {

/// Options for the configured cluster with a fresh namespace, or nullopt when none is configured.
std::optional<rados_options> ceph_test_options();

/// True when DEPOT_TEST_CEPH_CONF is set (evaluated at static initialization for doctest::skip).
bool ceph_configured();

/// A RADOS store on the configured cluster with `options` (namespace included), whose namespace is emptied
/// when the returned pointer is released.
std::shared_ptr<blob_store> make_test_rados_store(const rados_options& options);

/// A synchronous librados client on the configured cluster, shared by the tests. Thread-safe.
class ceph_inspector
{
public:
    static ceph_inspector& get();

    /// Names of every object in namespace `ns` of the test pool, sorted.
    std::vector<std::string> objects(const std::string& ns);
    /// Size of one object; nullopt if it does not exist.
    std::optional<std::uint64_t> size(const std::string& ns, const std::string& name);
    /// Removes one object (true if it existed).
    bool remove(const std::string& ns, const std::string& name);
    /// Removes every object of `ns`.
    void clear(const std::string& ns);

private:
    ceph_inspector();
    std::mutex mu_;
    librados::Rados rados_;
    librados::IoCtx io_;
};

} // namespace depot::storage::testing
