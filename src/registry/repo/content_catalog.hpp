#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// Questions about stored content that the REST API answers: which whole-object digests a caller already
/// holds (upload avoidance), where such content can be referenced from, and how much space buckets use
/// before (logical) and after (physical) deduplication.
///
/// Visibility is the caller's: only objects in buckets the caller can read count, so a digest never
/// reveals or grants content another owner stored. Encrypted objects (SSE-S3 and SSE-C) never count: an SSE-C
/// object's digest would confirm a guessed plaintext, or clone it, without its key.

#include "registry/pg/pg.hpp"
#include "registry/repo/credential_scope.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

// content_match, content_source and usage: registry/types.hpp.

class content_catalog
{
public:
    explicit content_catalog(pg::pool& pool) : pool_(pool) {}

    /// Which of `digests` (raw SHA-256) are the whole-object digest of some object version in a bucket that
    /// `owner_id` owns, with the sizes found.
    asio::awaitable<std::vector<content_match>> lookup(std::string_view owner_id,
                                                       const std::vector<std::string>& digests);
    /// An object version in a bucket `owner_id` owns with exactly this content, if any; with `within`, only
    /// one inside that area (a scoped credential's: content outside it is as absent as content nobody
    /// stores).
    asio::awaitable<std::optional<content_source>> find_source(std::string_view owner_id,
                                                               std::string_view sha256, std::uint64_t size,
                                                               const scope_area* within = nullptr);
    asio::awaitable<usage> bucket_usage(std::int64_t bucket_id);
    /// Over every bucket `owner_id` owns; blobs shared between them count once.
    asio::awaitable<usage> owner_usage(std::string_view owner_id);

private:
    pg::pool& pool_;
};

} // namespace depot::registry
