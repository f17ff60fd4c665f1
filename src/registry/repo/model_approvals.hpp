#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The SQL of the approval workflow and a model's history (schema: model_versions' state, model_events):
/// what registry/service/model_approvals.cpp runs, inside the transaction (or on the connection) the service
/// passes. The version row is locked here where the service asks for it; the transition rules, the
/// model_events rows and the outbox events are the service's (registry/repo/model_detail.hpp).

#include "registry/pg/pg.hpp"
#include "registry/service/model_registry.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

/// Locks version `version_id` FOR UPDATE and returns its state; nullopt when it is gone.
asio::awaitable<std::optional<std::string>> lock_version_state(pg::connection& c, std::int64_t version_id);

/// The version's last submission: its model_events id (0 when it was never submitted) and who submitted it
/// ("" when nobody did).
struct submission
{
    std::int64_t event_id = 0;
    std::string actor;
};
asio::awaitable<submission> last_submission(pg::connection& c, std::int64_t version_id);

/// Whether `actor` ever submitted the version (any submission, not only the last).
asio::awaitable<bool> ever_submitted(pg::connection& c, std::int64_t version_id, std::string_view actor);

/// True when `actor` approved the version after model_events id `since`.
asio::awaitable<bool> approved_since(pg::connection& c, std::int64_t version_id, std::int64_t since,
                                     std::string_view actor);

/// How many distinct users approved the version after model_events id `since` and may still approve in
/// team `team_id`: installation admins, and members whose role is at least `approver_role` (an approval
/// by someone who has since left or been demoted does not count toward the policy).
asio::awaitable<std::int64_t> approvers_since(pg::connection& c, std::int64_t version_id, std::int64_t since,
                                              std::int64_t team_id, team_role approver_role);

/// Marks the version approved.
asio::awaitable<void> mark_version_approved(pg::connection& c, std::int64_t version_id);

/// Sets the version's state to `state`.
asio::awaitable<void> set_version_state(pg::connection& c, std::int64_t version_id, std::string_view state);

/// The model's events after id `after` (only those of version `version_id` when set), by id, at most
/// `limit`.
asio::awaitable<std::vector<model_event>> model_events_after(pg::connection& c, std::int64_t model_id,
                                                             std::optional<std::int64_t> version_id,
                                                             std::int64_t after, std::int64_t limit);

} // namespace depot::registry
