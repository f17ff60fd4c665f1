#include "registry/service/warmups.hpp"

#include "registry/repo/warmup_repository.hpp"

namespace depot::registry {

warmup_service::warmup_service(pg::pool& pool) : repo_(std::make_unique<warmup_repository>(pool)) {}

warmup_service::~warmup_service() = default;

asio::awaitable<warmup_job> warmup_service::create(const audit_context& who, std::int64_t team_id,
                                                   std::int64_t model_id, std::int64_t version_id,
                                                   std::optional<std::string> alias, std::string_view actor)
{
    return repo_->create(who, team_id, model_id, version_id, std::move(alias), actor);
}

asio::awaitable<std::vector<warmup_job>> warmup_service::list(std::int64_t model_id, std::int64_t before,
                                                              std::size_t limit)
{
    return repo_->list(model_id, before, limit);
}

asio::awaitable<std::optional<warmup_job>> warmup_service::get(std::int64_t model_id, std::int64_t job_id)
{
    return repo_->get(model_id, job_id);
}

asio::awaitable<std::vector<std::string>> warmup_service::team_policy(std::int64_t team_id)
{
    return repo_->team_policy(team_id);
}

asio::awaitable<void> warmup_service::set_team_policy(const audit_context& who, std::int64_t team_id,
                                                      const std::vector<std::string>& events)
{
    return repo_->set_team_policy(who, team_id, events);
}

asio::awaitable<std::optional<std::vector<std::string>>> warmup_service::model_policy(std::int64_t model_id)
{
    return repo_->model_policy(model_id);
}

asio::awaitable<void> warmup_service::set_model_policy(const audit_context& who, std::int64_t model_id,
                                                       const std::optional<std::vector<std::string>>& events)
{
    return repo_->set_model_policy(who, model_id, events);
}

asio::awaitable<void> warmup_service::heartbeat(std::string_view instance, std::chrono::milliseconds ttl)
{
    return repo_->heartbeat(instance, ttl);
}

asio::awaitable<void> warmup_service::deregister(std::string_view instance)
{
    return repo_->deregister(instance);
}

asio::awaitable<std::vector<warmup_job>> warmup_service::due(std::string_view instance,
                                                             std::chrono::seconds max_age)
{
    return repo_->due(instance, max_age);
}

asio::awaitable<std::vector<warmup_file>> warmup_service::files(std::int64_t version_id)
{
    return repo_->files(version_id);
}

asio::awaitable<void> warmup_service::begin(std::int64_t job_id, std::string_view instance,
                                            std::int64_t files_total, std::int64_t bytes_total)
{
    return repo_->begin(job_id, instance, files_total, bytes_total);
}

asio::awaitable<void> warmup_service::report(std::int64_t job_id, std::string_view instance,
                                             const warmup_report& r)
{
    return repo_->report(job_id, instance, r);
}

asio::awaitable<std::size_t> warmup_service::sweep()
{
    return repo_->sweep();
}

} // namespace depot::registry
