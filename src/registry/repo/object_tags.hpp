#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The tag set column of object version rows (object_versions.tags, schema/0020_tagging.sql).

#include "registry/pg/pg.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <string_view>

namespace depot::registry {

/// Sets the stored tag set (tags_json) of version `row`; false when it is purged, a delete marker or gone.
boost::asio::awaitable<bool> set_version_tags(pg::connection& c, std::int64_t row,
                                              std::string_view tags_json);

} // namespace depot::registry
