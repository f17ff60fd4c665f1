#pragma once
/// \file
/// Buckets: creation, lookup, listing, deletion and their settings. Each change is one transaction with its
/// audit row (bucket.create, bucket.update, bucket.acl, ...), and updates the lookup cache when there is one
/// (other processes learn of it from the trigger's notice). The SQL is registry/repo/bucket_repository,
/// internal to the registry.

#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/types.hpp"

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

class bucket_repository;
class lookup_cache;

class bucket_service
{
public:
    using access_setting = bucket_access_setting;

    /// The pool (and `cache`, if any) must outlive the service. With a cache, get() answers from it.
    explicit bucket_service(pg::pool& pool, lookup_cache* cache = nullptr);
    ~bucket_service();
    bucket_service(const bucket_service&) = delete;
    bucket_service& operator=(const bucket_service&) = delete;

    /// bucket_already_owned_by_you / bucket_already_exists when the name is taken. `object_lock`:
    /// x-amz-bucket-object-lock-enabled, the bucket starts with versioning Enabled and Object Lock on.
    asio::awaitable<result<bucket>> create(const audit_context& who, std::string_view name,
                                           std::string_view owner_id, std::string_view region,
                                           bool object_lock = false);
    /// no_such_bucket when absent.
    asio::awaitable<result<bucket>> get(std::string_view name);
    /// Buckets owned by `owner_id`, by name.
    asio::awaitable<std::vector<bucket>> list_owned(std::string_view owner_id);
    /// no_such_bucket, bucket_not_empty while any object version remains, or conflict while multipart
    /// uploads remain (the caller aborts them and retries).
    asio::awaitable<result<void>> remove(const audit_context& who, std::string_view name);
    /// Deduplication of new content on or off; what is stored stays as it is. no_such_bucket.
    asio::awaitable<result<bucket>> set_dedup(const audit_context& who, std::string_view name, bool dedup);
    /// object.created / object.deleted events for the bucket's writes on or off. no_such_bucket.
    asio::awaitable<result<bucket>> set_object_events(const audit_context& who, std::string_view name,
                                                      bool enabled);
    /// The CORS configuration (the XML GetBucketCors returns); nullopt removes it. no_such_bucket.
    asio::awaitable<result<bucket>> set_cors(const audit_context& who, std::string_view name,
                                             std::optional<std::string> cors);
    /// The default encryption ("AES256"); nullopt removes it. no_such_bucket.
    asio::awaitable<result<bucket>> set_encryption(const audit_context& who, std::string_view name,
                                                   std::optional<std::string> algorithm);
    /// The tag set; nullopt removes it. Precondition: the set passed s3::check_tag_set. no_such_bucket.
    asio::awaitable<result<bucket>> set_tags(const audit_context& who, std::string_view name,
                                             std::optional<std::vector<s3::tag>> tags);
    /// PutObjectLockConfiguration: Object Lock on (for good) and the default retention set or cleared.
    /// no_such_bucket; invalid_bucket_state unless versioning is Enabled.
    asio::awaitable<result<bucket>> set_object_lock(const audit_context& who, std::string_view name,
                                                    const std::optional<s3::default_retention>& rule);
    /// The bucket policy; nullopt removes it. Precondition: it parsed (auth::parse_bucket_policy).
    /// no_such_bucket.
    asio::awaitable<result<bucket>> set_policy(const audit_context& who, std::string_view name,
                                               std::optional<std::string> policy);
    /// One access control setting; nullopt removes it. Precondition: the value is valid. no_such_bucket.
    asio::awaitable<result<bucket>> set_access(const audit_context& who, std::string_view name,
                                               access_setting what, std::optional<std::string> value);
    /// What the installation stores. Two full scans: callers cache the answer.
    asio::awaitable<stored_totals> totals();

private:
    std::unique_ptr<bucket_repository> repo_;
};

} // namespace depot::registry
