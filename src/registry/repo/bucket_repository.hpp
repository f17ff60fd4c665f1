#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// Buckets: creation, lookup, listing and deletion.

#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/types.hpp"

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;
class lookup_cache;

class bucket_repository
{
public:
    /// The pool (and `cache`, if any) must outlive the repository. With a cache, get() answers from it and
    /// the changes below update it.
    explicit bucket_repository(pg::pool& pool, lookup_cache* cache = nullptr) : pool_(pool), cache_(cache) {}

    /// bucket_already_owned_by_you / bucket_already_exists when the name is taken.
    /// `object_lock`: x-amz-bucket-object-lock-enabled, the bucket starts with versioning Enabled and Object
    /// Lock on.
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
    /// Turns deduplication of new content on or off; what is stored stays as it is. no_such_bucket.
    asio::awaitable<result<bucket>> set_dedup(const audit_context& who, std::string_view name, bool dedup);
    /// Turns object.created / object.deleted events for the bucket's writes on or off. no_such_bucket.
    asio::awaitable<result<bucket>> set_object_events(const audit_context& who, std::string_view name,
                                                      bool enabled);

    /// Sets (or, with nullopt, removes) the bucket's CORS configuration: the XML GetBucketCors returns.
    /// no_such_bucket.
    asio::awaitable<result<bucket>> set_cors(const audit_context& who, std::string_view name,
                                             std::optional<std::string> cors);

    /// Sets (or, with nullopt, removes) the bucket's default encryption (PutBucketEncryption /
    /// DeleteBucketEncryption): the SSEAlgorithm, "AES256". no_such_bucket.
    asio::awaitable<result<bucket>> set_encryption(const audit_context& who, std::string_view name,
                                                   std::optional<std::string> algorithm);

    /// Sets (or, with nullopt, removes) the bucket's tag set (PutBucketTagging / DeleteBucketTagging).
    /// Precondition: the set passed s3::check_tag_set. no_such_bucket.
    asio::awaitable<result<bucket>> set_tags(const audit_context& who, std::string_view name,
                                             std::optional<std::vector<s3::tag>> tags);

    /// PutObjectLockConfiguration: turns Object Lock on (for good) and sets or clears the default retention.
    /// Audited as bucket.object_lock. no_such_bucket; invalid_bucket_state unless versioning is Enabled
    /// (checked under the bucket's row lock, so a concurrent PutBucketVersioning cannot slip between).
    asio::awaitable<result<bucket>> set_object_lock(const audit_context& who, std::string_view name,
                                                    const std::optional<s3::default_retention>& rule);
    /// Sets (or, with nullopt, removes) the bucket's policy (PutBucketPolicy / DeleteBucketPolicy), audited
    /// as bucket.policy with the document. Precondition: it parsed (auth::parse_bucket_policy).
    /// no_such_bucket.
    asio::awaitable<result<bucket>> set_policy(const audit_context& who, std::string_view name,
                                               std::optional<std::string> policy);

    /// Access control settings (schema 0023), each with an audit action of its own: the ACL's stored grants
    /// (bucket.acl), the PublicAccessBlock flags (bucket.public_access_block), the object ownership
    /// (bucket.ownership_controls). nullopt removes the setting. Precondition: the value is valid (the
    /// operation validated it). no_such_bucket.
    using access_setting = bucket_access_setting;
    asio::awaitable<result<bucket>> set_access(const audit_context& who, std::string_view name,
                                               access_setting what, std::optional<std::string> value);

    /// What the installation stores (registry/types.hpp). Two full scans: callers cache the answer.
    using stored_totals = registry::stored_totals;
    asio::awaitable<stored_totals> totals();

private:
    /// Sets one settings column (a constant name, never from a request) and writes the bucket.update audit
    /// row with `audit_json`. no_such_bucket.
    asio::awaitable<result<bucket>> set_setting(const audit_context& who, std::string_view name,
                                                std::string_view column, pg::param value,
                                                std::string_view audit_json,
                                                std::string_view action = "bucket.update");
    /// Drops `name` from the cache after a committed change (the trigger's notice tells other processes).
    void forget(std::string_view name);

    pg::pool& pool_;
    lookup_cache* cache_;
};

} // namespace depot::registry
