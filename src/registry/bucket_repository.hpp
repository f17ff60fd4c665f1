#pragma once
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
    asio::awaitable<result<bucket>> create(const audit_context& who, std::string_view name,
                                           std::string_view owner_id, std::string_view region);
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

    /// What the installation stores: logical bytes (current object versions, delete markers excepted) and
    /// physical bytes (stored blobs, each identical content once). Two full scans: callers cache the answer.
    struct stored_totals
    {
        std::int64_t logical = 0;
        std::int64_t physical = 0;
    };
    asio::awaitable<stored_totals> totals();

private:
    /// Sets one settings column (a constant name, never from a request) and writes the bucket.update audit
    /// row with `audit_json`. no_such_bucket.
    asio::awaitable<result<bucket>> set_setting(const audit_context& who, std::string_view name,
                                                std::string_view column, pg::param value,
                                                std::string_view audit_json);
    /// Drops `name` from the cache after a committed change (the trigger's notice tells other processes).
    void forget(std::string_view name);

    pg::pool& pool_;
    lookup_cache* cache_;
};

} // namespace depot::registry
