#pragma once
/// \file
/// Warm-up jobs: the REST API creates and reads jobs and sets the warm-up policy (audited); every depotd's
/// warm-up worker (server/warmup) heartbeats, finds the jobs it still has to do, reports progress and
/// finishes them. A job waits for the instances alive when it was created and completes (warmup.completed
/// or warmup.failed, through the outbox) once each has finished or died. Jobs started by policy are created
/// by the model registry inside the transaction of the event. Thread-safe (all state is in PostgreSQL). The
/// SQL is registry/repo/warmup_repository, internal to the registry.

#include "registry/pg/pg.hpp"
#include "registry/types.hpp"
#include "registry/vocabulary.hpp"
#include "registry/warmup_types.hpp"

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

class warmup_repository;

class warmup_service
{
public:
    /// The pool must outlive the service.
    explicit warmup_service(pg::pool& pool);
    ~warmup_service();
    warmup_service(const warmup_service&) = delete;
    warmup_service& operator=(const warmup_service&) = delete;

    /// A job for the version, started by the API.
    asio::awaitable<warmup_job> create(const audit_context& who, std::int64_t team_id, std::int64_t model_id,
                                       std::int64_t version_id, std::optional<std::string> alias,
                                       std::string_view actor);
    /// A model's jobs, newest first, with ids below `before` (0 = from the newest), at most `limit`.
    asio::awaitable<std::vector<warmup_job>> list(std::int64_t model_id, std::int64_t before,
                                                  std::size_t limit);
    /// One job of the model, with its progress; nullopt if there is none.
    asio::awaitable<std::optional<warmup_job>> get(std::int64_t model_id, std::int64_t job_id);

    /// The policy lists: a team's, and a model's own (nullopt = the team's applies).
    asio::awaitable<std::vector<std::string>> team_policy(std::int64_t team_id);
    asio::awaitable<void> set_team_policy(const audit_context& who, std::int64_t team_id,
                                          const std::vector<std::string>& events);
    asio::awaitable<std::optional<std::vector<std::string>>> model_policy(std::int64_t model_id);
    asio::awaitable<void> set_model_policy(const audit_context& who, std::int64_t model_id,
                                           const std::optional<std::vector<std::string>>& events);

    /// Marks `instance` alive until now + ttl (registering it on first call), and forgets instances whose
    /// row expired more than ten minutes ago.
    asio::awaitable<void> heartbeat(std::string_view instance, std::chrono::milliseconds ttl);
    /// Removes the liveness row (a clean shutdown), and completes jobs that only waited for it.
    asio::awaitable<void> deregister(std::string_view instance);
    /// Jobs created within `max_age` that `instance` has not finished, oldest first.
    asio::awaitable<std::vector<warmup_job>> due(std::string_view instance, std::chrono::seconds max_age);
    /// The version's files and their blob segments, in path order.
    asio::awaitable<std::vector<warmup_file>> files(std::int64_t version_id);
    /// Records (or restarts) the instance's run of a job.
    asio::awaitable<void> begin(std::int64_t job_id, std::string_view instance, std::int64_t files_total,
                                std::int64_t bytes_total);
    /// Updates the instance's numbers; with a final state (completed, failed) it also completes the job
    /// when it was the last one it waited for (in the same transaction).
    asio::awaitable<void> report(std::int64_t job_id, std::string_view instance, const warmup_report& r);
    /// Completes running jobs whose awaited instances have all finished or died. Returns how many.
    asio::awaitable<std::size_t> sweep();

private:
    std::unique_ptr<warmup_repository> repo_;
};

} // namespace depot::registry
