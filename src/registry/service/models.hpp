#pragma once
/// \file
/// The model registry's read-only queries that are not model_registry's own (registry/service/
/// model_registry.hpp): filtered model and version lists (REST listModels / listVersions with ?name= and
/// ?label=), the key tree of the S3 models view, and the commit ids of the Hugging Face Hub API. A thin
/// service: each function forwards to one repository query and adds nothing (no transaction, no audit: they
/// read); it exists so that the HTTP layer never names registry/repo/, which is internal to the registry.

#include "registry/pg/pg.hpp"
#include "registry/service/model_registry.hpp"
#include "registry/types.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::registry::model_queries {

namespace asio = boost::asio;

/// A page of the team's models matching `filter`, by name, after `after`: the rows and order of
/// model_registry::models, narrowed in SQL so that paging stays exact.
asio::awaitable<std::vector<model>> find_models(pg::pool& pool, std::int64_t team_id,
                                                const model_filter& filter, std::string_view after,
                                                std::size_t limit);

/// The model's versions carrying `label`, newest first, below `before` (0 = from the newest).
asio::awaitable<std::vector<model_version>>
find_versions(pg::pool& pool, std::int64_t model_id, const label_match& label, int before, std::size_t limit);

/// The commit id (40 lowercase hex digits, derived from the frozen manifest, stored once) of version
/// `version_id` of model `model_id`.
asio::awaitable<std::string> version_commit(pg::pool& pool, std::int64_t model_id, std::int64_t version_id);

/// The number of the version of `model_id` whose commit id is `commit`; nullopt when none has it.
asio::awaitable<std::optional<int>> version_of_commit(pg::pool& pool, std::int64_t model_id,
                                                      std::string_view commit);

/// The key tree of the S3 models view (s3://<models bucket>/<team>/<model>/<ref>/<path>), one bounded page
/// of one level at a time, in the byte order of the key segment each produces (`name + "/"`).
/// The teams `user_id` belongs to (every team when `is_admin`).
asio::awaitable<std::vector<view_node>> view_teams(pg::pool& pool, std::string_view user_id, bool is_admin,
                                                   const view_cursor& from, std::size_t limit);
asio::awaitable<std::vector<view_node>> view_models(pg::pool& pool, std::int64_t team_id,
                                                    const view_cursor& from, std::size_t limit);
/// A model's refs: version numbers, labels, and aliases of versions that are not archived.
asio::awaitable<std::vector<view_ref>> view_refs(pg::pool& pool, std::int64_t model_id,
                                                 const view_cursor& from, std::size_t limit);

} // namespace depot::registry::model_queries
