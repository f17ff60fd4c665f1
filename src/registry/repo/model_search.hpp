#pragma once
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

/// A version label (the `labels` object of a version): key and value, compared as text (a number 5 matches
/// "5").
struct label_match
{
    std::string key;
    std::string value;
};

struct model_filter
{
    /// Part of the model's name (case-insensitive); empty = any.
    std::string name_contains;
    /// Some version of the model carries this label.
    std::optional<label_match> label;
};

/// A page of the team's models matching `filter`, by name, after `after`.
asio::awaitable<std::vector<model>> find_models(pg::pool& pool, std::int64_t team_id,
                                                const model_filter& filter, std::string_view after,
                                                std::size_t limit);

/// The model's versions carrying `label`, newest first, below `before` (0 = from the newest).
asio::awaitable<std::vector<model_version>>
find_versions(pg::pool& pool, std::int64_t model_id, const label_match& label, int before, std::size_t limit);

} // namespace depot::registry
