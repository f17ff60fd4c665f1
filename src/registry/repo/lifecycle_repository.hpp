#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The SQL of bucket lifecycle (registry/service/lifecycle.hpp decides what to do with it): the
/// configurations in the bucket rows (schema 0022), the installation-wide lock of a pass, and the rows each
/// kind of rule selects, page by page in (key, row id) order.

#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/types.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::s3 {
struct lifecycle_filter;
}

namespace depot::registry {

namespace asio = boost::asio;

/// A bucket with a lifecycle configuration: the XML GetBucketLifecycleConfiguration returns.
struct lifecycle_bucket
{
    std::int64_t id = 0;
    std::string name;
    std::string configuration;
};

/// Which rows a rule selects: those of `bucket_id` its filter matches (prefix, size bounds, tags: the row's
/// tag set includes every (key, value) of the filter), due at `cutoff` (started at or before it: last
/// modified, made noncurrent, initiated).
struct lifecycle_selection
{
    std::int64_t bucket_id = 0;
    const s3::lifecycle_filter& filter;
    time_point cutoff;
};

/// A row a rule selected.
struct lifecycle_candidate
{
    std::string key;
    std::int64_t row_id = 0;  ///< object_versions.id, multipart_uploads.id
    std::string version_id;   ///< the upload id of an upload
    std::string etag;         ///< current versions only (empty otherwise)
    time_point last_modified; ///< current versions only
};

class lifecycle_repository
{
public:
    /// The pool must outlive the repository.
    explicit lifecycle_repository(pg::pool& pool) : pool_(pool) {}

    /// Called for each selected row, with no connection of the repository held (it may delete the row).
    using visitor = std::function<asio::awaitable<void>(const lifecycle_candidate&)>;

    /// The bucket's configuration; nullopt when it has none.
    asio::awaitable<std::optional<std::string>> configuration(std::int64_t bucket_id);
    /// Sets (or, with nullopt, removes) the bucket's configuration; audited as bucket.update. no_such_bucket.
    asio::awaitable<result<void>> set_configuration(const audit_context& who, std::string_view bucket,
                                                    std::optional<std::string> xml);
    /// Every bucket with a configuration, by id.
    asio::awaitable<std::vector<lifecycle_bucket>> configured_buckets();

    /// Runs `body` holding the installation-wide lifecycle lock (a transaction-level advisory lock on a
    /// connection of its own, released when `body` returns or throws); false, without running it, while
    /// another process holds the lock.
    asio::awaitable<bool> exclusively(const std::function<asio::awaitable<void>()>& body);

    /// Multipart uploads under the filter's prefix initiated at or before the cutoff (the prefix only: an
    /// upload has neither size nor tags yet).
    asio::awaitable<void> each_due_upload(const lifecycle_selection& s, const visitor& visit);
    /// Current versions (not delete markers) last modified at or before the cutoff.
    asio::awaitable<void> each_due_current_version(const lifecycle_selection& s, const visitor& visit);
    /// Delete markers that are their key's only version, written at or before the cutoff (the prefix only:
    /// a marker has no size; the caller never asks with tags, which a marker has not).
    asio::awaitable<void> each_due_lone_delete_marker(const lifecycle_selection& s, const visitor& visit);
    /// Noncurrent versions (delete markers included) whose successor was written at or before the cutoff,
    /// beyond the `newer` newest noncurrent versions of their key.
    asio::awaitable<void> each_due_noncurrent_version(const lifecycle_selection& s, int newer,
                                                      const visitor& visit);

private:
    /// Keyset pagination: runs `statement` with $1 = the key and $2 = the row id of the last row visited
    /// (first "" and 0), $3 = the page size and the statement's own parameters as $4..., visiting the rows
    /// (key, row id, version id, etag, last modified in epoch ms), until a page comes back short.
    asio::awaitable<void> paginate(const pg::statement& statement, const visitor& visit);

    pg::pool& pool_;
};

} // namespace depot::registry
