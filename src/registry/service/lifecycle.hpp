#pragma once
/// \file
/// Executes bucket lifecycle configurations (s3/lifecycle.hpp), called by the periodic cleanup. For each
/// bucket with a configuration, each Enabled rule, on the object versions its filter selects (prefix, size
/// bounds, and tags: the version's own tag set as it is now includes every tag of the filter):
///   - Expiration Days / Date: the current version expires, through the object service's delete path
///     (unversioned: deleted; versioned or suspended: hidden behind a delete marker, as DeleteObject does),
///     conditioned on the version still being the one found (a write in between wins);
///   - Expiration Days also removes a delete marker that is the key's only version once it is that old, and
///     ExpiredObjectDeleteMarker removes such a marker whatever its age (a marker has no tags: a rule with a
///     tag filter never selects one);
///   - NoncurrentVersionExpiration: versions noncurrent (since their successor was written) for
///     NoncurrentDays, beyond the NewerNoncurrentVersions newest noncurrent ones, are deleted permanently;
///   - AbortIncompleteMultipartUpload: uploads initiated DaysAfterInitiation ago are aborted.
/// Blob references of model versions and snapshots are their own: expiring an object never reaches a
/// frozen version's bytes. Every removal leaves the audit row its delete path writes, with actor "system"
/// and credential "lifecycle". The SQL is registry/repo/lifecycle_repository.hpp; the decisions are here.

#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/service/multipart_service.hpp"
#include "registry/types.hpp"
#include "storage/blob_store.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace depot::registry {

namespace asio = boost::asio;

class lifecycle_repository;

/// What one pass did.
struct lifecycle_counts
{
    std::size_t expired_current = 0;        ///< current versions deleted or hidden behind a delete marker
    std::size_t expired_noncurrent = 0;     ///< noncurrent versions deleted permanently
    std::size_t removed_delete_markers = 0; ///< expired object delete markers removed
    std::size_t aborted_uploads = 0;        ///< incomplete multipart uploads aborted
    std::size_t kept_locked = 0;            ///< due noncurrent versions kept: Object Lock retention or hold
    std::size_t failed_buckets = 0;         ///< buckets whose stored configuration no longer parses
};

class lifecycle_service
{
public:
    /// All must outlive the service.
    lifecycle_service(pg::pool& pool, storage::blob_store& store, multipart_service& multipart);
    ~lifecycle_service();
    lifecycle_service(const lifecycle_service&) = delete;
    lifecycle_service& operator=(const lifecycle_service&) = delete;

    /// The bucket's configuration as GetBucketLifecycleConfiguration returns it; nullopt when it has none.
    asio::awaitable<std::optional<std::string>> configuration(std::int64_t bucket_id);

    /// Sets (or, with nullopt, removes) the bucket's configuration: the XML GetBucketLifecycleConfiguration
    /// returns, validated by the caller (s3/lifecycle.hpp). Audited as bucket.update. no_such_bucket.
    asio::awaitable<result<void>> set_configuration(const audit_context& who, std::string_view bucket,
                                                    std::optional<std::string> xml);

    /// One pass over every bucket with a lifecycle configuration, as of `now`; a lifecycle day lasts `day`
    /// (86400 s, or less for tests: --lifecycle-day-seconds). Safe with several depotd processes: each
    /// action is a delete or abort of its own that checks what it removes under the row's lock. Audited as
    /// actor "system", credential "lifecycle".
    asio::awaitable<lifecycle_counts> run(time_point now, std::chrono::seconds day);

private:
    std::unique_ptr<lifecycle_repository> repo_;
    pg::pool& pool_;
    storage::blob_store& store_;
    multipart_service& multipart_;
};

} // namespace depot::registry
