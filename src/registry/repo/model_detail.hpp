#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// What the files of model_registry (model_registry.cpp, model_teams.cpp, model_versions.cpp,
/// model_approvals.cpp, model_aliases.cpp) share: the text[] columns of approval policies, and what every
/// model transaction records of itself (model_events rows, the audit row, outbox events, alias moves).
/// Internal to the registry; nothing outside src/registry includes it.

#include "registry/pg/pg.hpp"
#include "registry/service/model_registry.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::registry::model_detail {

/// SELECT ... FROM models m JOIN teams t JOIN buckets b: the columns model_of reads; append WHERE ...
extern const char* const model_select;
model model_of(const pg::row& r);

/// SELECT ... FROM model_versions v: the columns version_of reads (approvals count from the last
/// submission); append WHERE ...
extern const char* const version_select;
model_version version_of(const pg::row& r);

/// A text[] literal; every element matches the alias-name pattern, so nothing needs quoting.
std::string text_array(const std::vector<std::string>& v);

std::vector<std::string> split_list(std::string_view s, char sep);

/// Parses PostgreSQL's text output of a text[] of simple names: {a,b}.
std::vector<std::string> parse_text_array(std::string_view s);

/// required_approvals, approver_role, protected_aliases::text starting at column `col`.
approval_policy policy_of(const pg::row& r, int col);

/// The details of an alias event: {"alias": name, "from": number|null, "to": number|null}. Alias names are
/// [A-Za-z0-9._-] only, so nothing needs escaping.
std::string alias_details(std::string_view name, std::optional<std::string> from, std::optional<int> to);

/// Inside a transaction: a model_events row, and the audit row on team/model[:version number].
asio::awaitable<void> record(pg::connection& c, std::int64_t model_id, std::optional<std::int64_t> version_id,
                             std::string_view action, const audit_context& who, std::string_view comment,
                             std::optional<std::string> from_state, std::optional<std::string> to_state,
                             std::string details = "{}");

/// The `data` of a model event: team, model, actor, then `extra` members (",\"k\":v...").
std::string event_data(const model& m, const audit_context& who, const std::string& extra = {});

/// Inside a transaction: the outbox event of a version transition (and the warm-ups it triggers).
asio::awaitable<void> emit_version_event(pg::connection& c, const model& m, std::string_view type,
                                         std::int64_t version_id, int number,
                                         const std::optional<std::string>& label, std::string_view state,
                                         const audit_context& who, std::string_view comment);

/// Inside a transaction: points alias `name` at version `version_id` (number `number`) and records the move
/// with the version it left (model_events, and an alias.updated event). Returns the alias's updated_at (epoch
/// ms).
asio::awaitable<std::int64_t> move_alias(pg::connection& c, const model& m, std::string_view name,
                                         std::int64_t version_id, int number, const audit_context& who);

} // namespace depot::registry::model_detail
