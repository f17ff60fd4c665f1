#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The SQL of teams and their members (schema: teams, team_members): what registry/service/model_teams.cpp
/// runs, inside the transaction (or on the connection) the service passes. The audit rows are the
/// service's.

#include "registry/pg/pg.hpp"
#include "registry/service/model_registry.hpp"
#include "registry/types.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

/// Inserts team `name` with its default approval policy; nullopt when a team has that name already.
asio::awaitable<std::optional<team>> insert_team(pg::connection& c, std::string_view name,
                                                 const approval_policy& defaults);

/// Every team when `all`, else the teams `user_id` is a member of; by name.
asio::awaitable<std::vector<team>> teams_with_member(pg::connection& c, std::string_view user_id, bool all);

/// The team named `name`, if any.
asio::awaitable<std::optional<team>> find_team(pg::connection& c, std::string_view name);

/// The user's role in the team; nullopt when the user is not a member.
asio::awaitable<std::optional<team_role>> member_role(pg::connection& c, std::int64_t team_id,
                                                      std::string_view user_id);

/// The team's members by user id.
asio::awaitable<std::vector<team_member>> team_members(pg::connection& c, std::int64_t team_id);

/// The display name of user `user_id`; nullopt when there is no such user.
asio::awaitable<std::optional<std::string>> display_name_of_user(pg::connection& c, std::string_view user_id);

/// What upsert_member returns: when the user joined the team, and the team's name.
struct member_row
{
    time_point added_at;
    std::string team_name;
};

/// Makes the user a member of the team with `role` (a member already keeps its added_at).
asio::awaitable<member_row> upsert_member(pg::connection& c, std::int64_t team_id, std::string_view user_id,
                                          team_role role);

/// Removes the user from the team; returns the team's name, nullopt when the user was not a member.
asio::awaitable<std::optional<std::string>> delete_member(pg::connection& c, std::int64_t team_id,
                                                          std::string_view user_id);

/// Disables the enabled webhook subscriptions of team `team_id` that `user_id` created, unless that user is
/// an installation admin (who manages every team's); `reason` becomes their disabled_reason. Returns their
/// ids, in order.
asio::awaitable<std::vector<std::int64_t>> disable_subscriptions_of(pg::connection& c, std::int64_t team_id,
                                                                    std::string_view user_id,
                                                                    std::string_view reason);

} // namespace depot::registry
