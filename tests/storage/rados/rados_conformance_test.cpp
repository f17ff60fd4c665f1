#include "rados_test_env.hpp"
#include "storage/conformance.hpp"

using namespace depot::storage;
using namespace depot::storage::testing;

// With the default layout (4 MiB stripes, window 8) most blobs of the suite are a single stripe.
DEPOT_BLOB_STORE_CONFORMANCE("rados", []() -> std::shared_ptr<blob_store> {
    auto options = ceph_test_options();
    return options ? make_test_rados_store(*options) : nullptr;
})

// Small stripes and a narrow window put stripe boundaries and window waits under every contract.
DEPOT_BLOB_STORE_CONFORMANCE("rados (64 KiB stripes, window 2)", []() -> std::shared_ptr<blob_store> {
    auto options = ceph_test_options();
    if (!options)
        return nullptr;
    options->stripe_size = 64 * 1024;
    options->window = 2;
    return make_test_rados_store(*options);
})
