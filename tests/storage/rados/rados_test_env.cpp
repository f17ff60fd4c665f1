#include "rados_test_env.hpp"

#include "common/hash.hpp"

#include <algorithm>
#include <cstdlib>
#include <doctest/doctest.h>
#include <stdexcept>

namespace depot::storage::testing {
namespace {

std::string env(const char* name, std::string fallback = {})
{
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : fallback;
}

rados_options base_options()
{
    rados_options o;
    o.conf_file = env("DEPOT_TEST_CEPH_CONF");
    o.pool = env("DEPOT_TEST_CEPH_POOL", "depot");
    o.user = env("DEPOT_TEST_CEPH_USER", "client.admin");
    o.keyring = env("DEPOT_TEST_CEPH_KEYRING");
    // Tests should fail fast rather than hang on a broken cluster.
    o.op_timeout = std::chrono::seconds(20);
    return o;
}

} // namespace

bool ceph_configured()
{
    return !env("DEPOT_TEST_CEPH_CONF").empty();
}

std::optional<rados_options> ceph_test_options()
{
    if (!ceph_configured())
        return std::nullopt;
    auto o = base_options();
    o.ns = "test-" + to_hex(random_bytes(6));
    return o;
}

std::shared_ptr<blob_store> make_test_rados_store(const rados_options& options)
{
    auto store = make_rados_blob_store(options);
    return std::shared_ptr<blob_store>(store.release(), [ns = options.ns](blob_store* s) {
        delete s;
        ceph_inspector::get().clear(ns);
    });
}

ceph_inspector& ceph_inspector::get()
{
    static ceph_inspector instance;
    return instance;
}

ceph_inspector::ceph_inspector()
{
    auto o = base_options();
    if (o.conf_file.empty())
        throw std::runtime_error("DEPOT_TEST_CEPH_CONF not set");
    if (rados_.init2(o.user.c_str(), "ceph", 0) < 0 || rados_.conf_read_file(o.conf_file.c_str()) < 0)
        throw std::runtime_error("test librados client: cannot read " + o.conf_file);
    if (!o.keyring.empty())
        rados_.conf_set("keyring", o.keyring.c_str());
    if (int r = rados_.connect(); r < 0)
        throw std::runtime_error("test librados client: cannot connect: " + std::to_string(r));
    if (int r = rados_.ioctx_create(o.pool.c_str(), io_); r < 0)
        throw std::runtime_error("test librados client: cannot open pool " + o.pool + ": " +
                                 std::to_string(r));
}

std::vector<std::string> ceph_inspector::objects(const std::string& ns)
{
    std::lock_guard lock(mu_);
    io_.set_namespace(ns);
    std::vector<std::string> names;
    for (auto it = io_.nobjects_begin(); it != io_.nobjects_end(); ++it)
        names.push_back(it->get_oid());
    std::sort(names.begin(), names.end());
    return names;
}

std::optional<std::uint64_t> ceph_inspector::size(const std::string& ns, const std::string& name)
{
    std::lock_guard lock(mu_);
    io_.set_namespace(ns);
    std::uint64_t size = 0;
    time_t mtime = 0;
    if (io_.stat(name, &size, &mtime) < 0)
        return std::nullopt;
    return size;
}

bool ceph_inspector::remove(const std::string& ns, const std::string& name)
{
    std::lock_guard lock(mu_);
    io_.set_namespace(ns);
    return io_.remove(name) == 0;
}

void ceph_inspector::clear(const std::string& ns)
{
    for (const auto& name : objects(ns))
        remove(ns, name);
}

} // namespace depot::storage::testing

TEST_CASE("the RADOS blob store tests have a Ceph cluster to run against")
{
    using namespace depot::storage::testing;
    if (ceph_configured()) {
        MESSAGE("RADOS tests run against " << std::string(std::getenv("DEPOT_TEST_CEPH_CONF")));
        return;
    }
    const char* skip = std::getenv("DEPOT_TEST_SKIP_CEPH");
    if (skip && std::string(skip) == "1") {
        MESSAGE("WARNING: DEPOT_TEST_SKIP_CEPH=1: every RADOS blob store test is skipped");
        return;
    }
    FAIL("DEPOT_TEST_CEPH_CONF not set, so the RADOS blob store was not tested: start a cluster with "
         "`scripts/ceph-dev start DIR` and `source DIR/env`, or set DEPOT_TEST_SKIP_CEPH=1 to skip on "
         "purpose");
}
