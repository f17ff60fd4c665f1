#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The SQL of model aliases (schema: model_aliases): what registry/service/model_aliases.cpp runs, inside
/// the transaction (or on the connection) the service passes. Rows are locked here where the service asks
/// for it; the preconditions, the alias rules and the events are the service's (moving an alias, with its
/// records, is model_detail::move_alias).

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

/// The model's aliases by name.
asio::awaitable<std::vector<model_alias>> aliases_of(pg::connection& c, std::int64_t model_id);

/// Locks the model's alias `name` FOR UPDATE and returns it; nullopt when there is none.
asio::awaitable<std::optional<model_alias>> lock_alias(pg::connection& c, std::int64_t model_id,
                                                       std::string_view name);

/// Locks version `version_id` FOR SHARE and returns its state; nullopt when it is gone.
asio::awaitable<std::optional<std::string>> share_version_state(pg::connection& c, std::int64_t version_id);

/// True when `name` is the label of one of the model's versions.
asio::awaitable<bool> is_version_label(pg::connection& c, std::int64_t model_id, std::string_view name);

/// The version a deleted alias pointed at.
struct deleted_alias
{
    std::int64_t version_id = 0;
    int number = 0;
};
/// Deletes the model's alias `name`; nullopt when there was none.
asio::awaitable<std::optional<deleted_alias>> delete_alias_row(pg::connection& c, std::int64_t model_id,
                                                               std::string_view name);

} // namespace depot::registry
