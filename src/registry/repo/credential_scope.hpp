#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The database half of scoped credentials: where a scope's model lives, and whether a path is a file of the
/// version an alias points to. What a scope is and allows: auth/scope.hpp and auth/authorize.hpp.

#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/vocabulary.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace depot::registry {

namespace asio = boost::asio;

// The pure part (parse_scope, scope_area, model_location, ...): auth/scope.hpp, named in registry/ by
// registry/vocabulary.hpp.

/// The model `team/model`, if it exists.
asio::awaitable<std::optional<model_location>> locate_model(pg::pool& pool, std::string_view team,
                                                            std::string_view model);

/// Whether `path` (relative to the model's prefix) is a file of the version the alias with id `alias_id` of
/// `model_id` points to now (false when that alias is gone).
asio::awaitable<bool> alias_has_file(pg::pool& pool, std::int64_t model_id, std::int64_t alias_id,
                                     std::string_view path);

/// The id of alias `alias` of the model `team/model`, if both exist.
asio::awaitable<std::optional<std::int64_t>> alias_id_of(pg::pool& pool, std::string_view team,
                                                         std::string_view model, std::string_view alias);

} // namespace depot::registry
