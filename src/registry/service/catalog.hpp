#pragma once
/// \file
/// The content catalog: questions about stored content that the REST API answers — which whole-object
/// digests a caller already holds (upload avoidance), where such content can be referenced from, and how
/// much space buckets use before (logical) and after (physical) deduplication. Visibility is the caller's:
/// only objects in buckets the caller owns count, so a digest never reveals or grants content another owner
/// stored. Encrypted objects take no part in lookups or sources: an SSE-C object's plaintext digest would
/// confirm a guessed plaintext (lookup) or clone the object (find_source) without the customer's key, and
/// SSE-S3 content, which never deduplicates either, is left out alike (see SECURITY.md). Read-only. The SQL
/// is registry/repo/content_catalog, internal to the registry.

#include "registry/pg/pg.hpp"
#include "registry/types.hpp"
#include "registry/vocabulary.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

class content_catalog;

class catalog_service
{
public:
    explicit catalog_service(pg::pool& pool);
    ~catalog_service();
    catalog_service(const catalog_service&) = delete;
    catalog_service& operator=(const catalog_service&) = delete;

    /// Which of `digests` (raw SHA-256) are the whole-object digest of some object version in a bucket that
    /// `owner_id` owns, with the sizes found.
    asio::awaitable<std::vector<content_match>> lookup(std::string_view owner_id,
                                                       const std::vector<std::string>& digests);
    /// An object version in a bucket `owner_id` owns with exactly this content, if any; with `within`, only
    /// one inside that area (a scoped credential's).
    asio::awaitable<std::optional<content_source>> find_source(std::string_view owner_id,
                                                               std::string_view sha256, std::uint64_t size,
                                                               const scope_area* within = nullptr);
    asio::awaitable<usage> bucket_usage(std::int64_t bucket_id);
    /// Over every bucket `owner_id` owns; blobs shared between them count once.
    asio::awaitable<usage> owner_usage(std::string_view owner_id);

private:
    std::unique_ptr<content_catalog> catalog_;
};

} // namespace depot::registry
