#include "registry/service/webhooks.hpp"

#include "registry/repo/webhook_repository.hpp"

namespace depot::registry {

webhook_service::webhook_service(pg::pool& pool, std::string server_key)
    : repo_(std::make_unique<webhook_repository>(pool, std::move(server_key)))
{}

webhook_service::~webhook_service() = default;

asio::awaitable<std::pair<webhook_subscription, std::string>>
webhook_service::create(const audit_context& who, std::int64_t team_id, webhook_spec spec,
                        std::string_view actor)
{
    return repo_->create(who, team_id, std::move(spec), actor);
}

asio::awaitable<std::vector<webhook_subscription>>
webhook_service::list(std::int64_t team_id, std::int64_t after_id, std::size_t limit)
{
    return repo_->list(team_id, after_id, limit);
}

asio::awaitable<result<webhook_subscription>> webhook_service::get(std::int64_t team_id, std::int64_t id)
{
    return repo_->get(team_id, id);
}

asio::awaitable<result<webhook_subscription>>
webhook_service::update(const audit_context& who, std::int64_t team_id, std::int64_t id, webhook_update u)
{
    return repo_->update(who, team_id, id, std::move(u));
}

asio::awaitable<result<void>> webhook_service::remove(const audit_context& who, std::int64_t team_id,
                                                      std::int64_t id)
{
    return repo_->remove(who, team_id, id);
}

asio::awaitable<result<std::pair<webhook_subscription, std::string>>>
webhook_service::rotate(const audit_context& who, std::int64_t team_id, std::int64_t id,
                        std::chrono::seconds overlap)
{
    return repo_->rotate(who, team_id, id, overlap);
}

asio::awaitable<result<std::int64_t>> webhook_service::ping(const audit_context& who, std::int64_t team_id,
                                                            std::int64_t id, std::string_view actor)
{
    return repo_->ping(who, team_id, id, actor);
}

asio::awaitable<std::vector<webhook_delivery>> webhook_service::deliveries(std::int64_t subscription_id,
                                                                           std::int64_t before_id,
                                                                           std::size_t limit,
                                                                           std::optional<std::string> state)
{
    return repo_->deliveries(subscription_id, before_id, limit, std::move(state));
}

asio::awaitable<result<webhook_delivery>> webhook_service::delivery(std::int64_t subscription_id,
                                                                    std::int64_t delivery_id)
{
    return repo_->delivery(subscription_id, delivery_id);
}

asio::awaitable<result<webhook_delivery>>
webhook_service::redeliver(const audit_context& who, std::int64_t subscription_id, std::int64_t delivery_id)
{
    return repo_->redeliver(who, subscription_id, delivery_id);
}

asio::awaitable<std::vector<claimed_delivery>> webhook_service::claim(std::size_t limit,
                                                                      std::chrono::seconds lease)
{
    return repo_->claim(limit, lease);
}

asio::awaitable<void> webhook_service::finish(const claimed_delivery& d, const attempt_outcome& o,
                                              const retry_policy& p, std::string_view instance)
{
    return repo_->finish(d, o, p, instance);
}

asio::awaitable<webhook_queue_state> webhook_service::queue()
{
    return repo_->queue();
}

asio::awaitable<std::vector<manifest_entry>> webhook_service::manifest(std::int64_t version_id,
                                                                       std::size_t limit)
{
    return repo_->manifest(version_id, limit);
}

asio::awaitable<std::size_t> webhook_service::bind_legacy_secrets()
{
    return repo_->bind_legacy_secrets();
}

asio::awaitable<std::optional<version_ref>> webhook_service::version_of(std::int64_t version_id)
{
    return repo_->version_of(version_id);
}

asio::awaitable<std::optional<std::string>> webhook_service::event_key_of(std::int64_t team_id)
{
    return repo_->event_key_of(team_id);
}

asio::awaitable<void> webhook_service::forget_event_key(std::int64_t team_id)
{
    return repo_->forget_event_key(team_id);
}

asio::awaitable<bool> webhook_service::claim_event_key(std::int64_t team_id, std::string_view access_key_id)
{
    return repo_->claim_event_key(team_id, access_key_id);
}

} // namespace depot::registry
