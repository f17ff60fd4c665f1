#pragma once
/// \file
/// Everything request handlers share: settings, the database pool, the blob store, repositories and
/// services. Built once by `server` and alive until it stops.

#include "config/options.hpp"
#include "registry/pg/pg.hpp"
#include "registry/service/buckets.hpp"
#include "registry/service/catalog.hpp"
#include "registry/service/credentials.hpp"
#include "registry/service/lifecycle.hpp"
#include "registry/service/lookup_cache.hpp"
#include "registry/service/model_registry.hpp"
#include "registry/service/multipart_service.hpp"
#include "registry/service/object_service.hpp"
#include "registry/service/snapshot_service.hpp"
#include "server/rate_limit.hpp"
#include "storage/blob_store.hpp"

#include <memory>

namespace depot::registry {
class webhook_service;
class warmup_service;
} // namespace depot::registry

namespace depot::storage {
class cached_blob_store;
}

namespace depot::server {

struct services
{
    services(const config::options& o, std::shared_ptr<pg::pool> pool,
             std::shared_ptr<storage::blob_store> store, std::string server_key)
        : opts(o), db(std::move(pool)), blobs(std::move(store)), lookups({.max_age = o.lookup_cache_ttl}),
          credentials(*db, std::move(server_key), cached()), buckets(*db, cached()),
          objects(*db, *blobs, cached()), multipart(*db, *blobs), lifecycle(*db, *blobs, multipart),
          models(*db, *blobs, objects, multipart, cached()), snapshots(*db, *blobs, objects), catalog(*db),
          limiter(o.rate_limit, o.rate_burst > 0 ? o.rate_burst : o.rate_limit),
          auth_failures({.limit = o.auth_failure_limit,
                         .window = o.auth_failure_window,
                         .cooldown = o.auth_failure_cooldown})
    {}

    const config::options& opts;
    /// The port the console's own listener is bound to (server.cpp; 0 = none): where /ui/ on the S3
    /// listener points to.
    unsigned short console_port = 0;
    /// The bearer token GET /metrics requires (--metrics-token-file, read by `run`); empty: none.
    std::string metrics_token;
    std::shared_ptr<pg::pool> db;
    std::shared_ptr<storage::blob_store> blobs;
    /// Access keys and buckets in memory (registry/service/lookup_cache.hpp); used once `run` has its LISTEN
    /// up.
    registry::lookup_cache lookups;
    /// Users, access keys, API tokens, console sessions (registry/service/credentials.hpp), shared with
    /// depotctl.
    registry::credential_service credentials;
    registry::bucket_service buckets;
    registry::object_service objects;
    registry::multipart_service multipart;
    /// Bucket lifecycle configurations, and their execution by the cleanup (registry/service/lifecycle.hpp).
    registry::lifecycle_service lifecycle;
    registry::model_registry models;
    registry::snapshot_service snapshots;
    registry::catalog_service catalog;
    rate_limiter limiter;
    /// Failed authentications per client address (rate_limit.hpp); checked before authenticating.
    auth_failure_limiter auth_failures;
    /// Open connections per client address, kept by the accept loop.
    address_counter connections_per_address;
    /// Webhook subscriptions and deliveries (registry/service/webhooks.hpp); set by `run` before
    /// serving.
    std::shared_ptr<registry::webhook_service> webhooks;
    /// The read cache (null when off) and the warm-up jobs; set by `run` before serving.
    std::shared_ptr<storage::cached_blob_store> cache;
    std::shared_ptr<registry::warmup_service> warmups;

private:
    registry::lookup_cache* cached() noexcept
    {
        return opts.lookup_cache_ttl.count() > 0 ? &lookups : nullptr;
    }
};

} // namespace depot::server
