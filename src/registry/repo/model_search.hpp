#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// Filtered lists of the model registry (REST listModels and listVersions with ?name= and ?label=): the
/// same rows and order as model_registry::models and ::versions, narrowed in SQL so that paging (by name,
/// by number) stays exact.

#include "registry/pg/pg.hpp"
#include "registry/service/model_registry.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::registry {

// label_match and model_filter: registry/types.hpp.

/// A page of the team's models matching `filter`, by name, after `after`.
asio::awaitable<std::vector<model>> find_models(pg::pool& pool, std::int64_t team_id,
                                                const model_filter& filter, std::string_view after,
                                                std::size_t limit);

/// The model's versions carrying `label`, newest first, below `before` (0 = from the newest).
asio::awaitable<std::vector<model_version>>
find_versions(pg::pool& pool, std::int64_t model_id, const label_match& label, int before, std::size_t limit);

} // namespace depot::registry
