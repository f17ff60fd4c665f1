#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// A bucket's name by its row id, for the audit rows and events of services that hold only the id.

#include "registry/pg/pg.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <string>

namespace depot::registry {

/// The name of bucket `bucket_id`; empty when it is gone.
boost::asio::awaitable<std::string> bucket_name_of(pg::connection& c, std::int64_t bucket_id);

} // namespace depot::registry
