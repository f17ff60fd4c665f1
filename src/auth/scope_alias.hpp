#pragma once
/// \file
/// The identity an alias scope is bound to: the stored scope's `alias_id` member (auth/scope.hpp), the id
/// of the alias row (model_aliases.id) the credential was made for, assigned by the registry when it stores
/// the scope (credential_service). An alias scope reaches the version that alias points to, never whatever
/// else later takes its name; 0 (no member, or an alias that is gone) reaches nothing. Pure.

#include <cstdint>
#include <string_view>

namespace depot::auth {

/// The scope's alias_id, 0 when it has none (or `scope_json` is not a scope).
std::int64_t scope_alias_id(std::string_view scope_json);

} // namespace depot::auth
