#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// Commit ids of model versions, as the Hugging Face Hub-compatible read API (src/server/hf/) shows them
/// (schema/0016_hf_commits.sql). A version's commit id is 40 lowercase hex digits, derived from its frozen
/// manifest: the model, the version number, and each file's path, size and SHA-256 (its ETag when the
/// digest is unknown). It is computed the first time it is asked for and stored, so it never changes; two
/// versions never share one (the number is part of it), and an alias that moves shows its new version's.

#include "registry/pg/pg.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace depot::registry {

namespace asio = boost::asio;

/// The commit id of version `version_id` of model `model_id`, computing and storing the commit ids of the
/// model's versions that have none yet (once per version, ever).
asio::awaitable<std::string> version_commit(pg::pool& pool, std::int64_t model_id, std::int64_t version_id);

/// The number of the version of `model_id` whose commit id is `commit`; nullopt when none has it. Assigns
/// the commit ids still missing first, so a commit id derived elsewhere from the same manifest resolves.
asio::awaitable<std::optional<int>> version_of_commit(pg::pool& pool, std::int64_t model_id,
                                                      std::string_view commit);

} // namespace depot::registry
