#include "config/blob_store_factory.hpp"

#include "storage/localfs/localfs_blob_store.hpp"
#include "storage/memory/memory_blob_store.hpp"
#include "storage/rados/rados_blob_store.hpp"

namespace depot::config {

std::shared_ptr<storage::blob_store> make_blob_store(const options& opts)
{
    if (opts.storage == "memory")
        return storage::make_memory_blob_store();
    if (opts.storage == "rados")
        return storage::make_rados_blob_store({.conf_file = opts.rados_conf,
                                               .user = opts.rados_user,
                                               .keyring = opts.rados_keyring,
                                               .pool = opts.rados_pool,
                                               .ns = opts.rados_namespace,
                                               .stripe_size = opts.rados_stripe_size,
                                               .window = opts.rados_window,
                                               .write_budget = opts.rados_write_budget,
                                               .op_timeout = opts.rados_op_timeout});
    return storage::make_localfs_blob_store({.root = opts.blob_dir});
}

} // namespace depot::config
