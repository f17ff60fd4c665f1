#include "registry/service/catalog.hpp"

#include "registry/repo/content_catalog.hpp"

namespace depot::registry {

catalog_service::catalog_service(pg::pool& pool) : catalog_(std::make_unique<content_catalog>(pool)) {}

catalog_service::~catalog_service() = default;

asio::awaitable<std::vector<content_match>> catalog_service::lookup(std::string_view owner_id,
                                                                    const std::vector<std::string>& digests)
{
    return catalog_->lookup(owner_id, digests);
}

asio::awaitable<std::optional<content_source>> catalog_service::find_source(std::string_view owner_id,
                                                                            std::string_view sha256,
                                                                            std::uint64_t size,
                                                                            const scope_area* within)
{
    return catalog_->find_source(owner_id, sha256, size, within);
}

asio::awaitable<usage> catalog_service::bucket_usage(std::int64_t bucket_id)
{
    return catalog_->bucket_usage(bucket_id);
}

asio::awaitable<usage> catalog_service::owner_usage(std::string_view owner_id)
{
    return catalog_->owner_usage(owner_id);
}

} // namespace depot::registry
