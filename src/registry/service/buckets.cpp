#include "registry/service/buckets.hpp"

#include "registry/repo/bucket_repository.hpp"

namespace depot::registry {

bucket_service::bucket_service(pg::pool& pool, lookup_cache* cache)
    : repo_(std::make_unique<bucket_repository>(pool, cache))
{}

bucket_service::~bucket_service() = default;

asio::awaitable<result<bucket>> bucket_service::create(const audit_context& who, std::string_view name,
                                                       std::string_view owner_id, std::string_view region,
                                                       bool object_lock)
{
    return repo_->create(who, name, owner_id, region, object_lock);
}

asio::awaitable<result<bucket>> bucket_service::get(std::string_view name)
{
    return repo_->get(name);
}

asio::awaitable<std::vector<bucket>> bucket_service::list_owned(std::string_view owner_id)
{
    return repo_->list_owned(owner_id);
}

asio::awaitable<result<void>> bucket_service::remove(const audit_context& who, std::string_view name)
{
    return repo_->remove(who, name);
}

asio::awaitable<result<bucket>> bucket_service::set_dedup(const audit_context& who, std::string_view name,
                                                          bool dedup)
{
    return repo_->set_dedup(who, name, dedup);
}

asio::awaitable<result<bucket>> bucket_service::set_object_events(const audit_context& who,
                                                                  std::string_view name, bool enabled)
{
    return repo_->set_object_events(who, name, enabled);
}

asio::awaitable<result<bucket>> bucket_service::set_cors(const audit_context& who, std::string_view name,
                                                         std::optional<std::string> cors)
{
    return repo_->set_cors(who, name, std::move(cors));
}

asio::awaitable<result<bucket>> bucket_service::set_encryption(const audit_context& who,
                                                               std::string_view name,
                                                               std::optional<std::string> algorithm)
{
    return repo_->set_encryption(who, name, std::move(algorithm));
}

asio::awaitable<result<bucket>> bucket_service::set_tags(const audit_context& who, std::string_view name,
                                                         std::optional<std::vector<s3::tag>> tags)
{
    return repo_->set_tags(who, name, std::move(tags));
}

asio::awaitable<result<bucket>>
bucket_service::set_object_lock(const audit_context& who, std::string_view name,
                                const std::optional<s3::default_retention>& rule)
{
    return repo_->set_object_lock(who, name, rule);
}

asio::awaitable<result<bucket>> bucket_service::set_policy(const audit_context& who, std::string_view name,
                                                           std::optional<std::string> policy)
{
    return repo_->set_policy(who, name, std::move(policy));
}

asio::awaitable<result<bucket>> bucket_service::set_access(const audit_context& who, std::string_view name,
                                                           access_setting what,
                                                           std::optional<std::string> value)
{
    return repo_->set_access(who, name, what, std::move(value));
}

asio::awaitable<stored_totals> bucket_service::totals()
{
    return repo_->totals();
}

} // namespace depot::registry
