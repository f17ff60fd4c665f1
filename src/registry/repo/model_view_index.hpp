#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The key tree of the S3 models view (s3://<models bucket>/<team>/<model>/<ref>/<path>), read one bounded
/// page at a time for listings: each level (teams, models, refs) comes in the byte order of the key
/// segment it produces (`name + "/"`, which is not the order of the names: "a-b/" < "a/"), from a bound
/// on, at most `limit` rows. A listing so loads what its page needs, not every model of a team or every
/// version of a model. Thread-safe (all state is in PostgreSQL).

#include "registry/pg/pg.hpp"
#include "registry/types.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

// view_node, view_ref and view_cursor: registry/types.hpp.

class model_view_index
{
public:
    explicit model_view_index(pg::pool& pool) : pool_(pool) {}

    /// The teams `user_id` belongs to (every team when `is_admin`).
    asio::awaitable<std::vector<view_node>> teams(std::string_view user_id, bool is_admin,
                                                  const view_cursor& from, std::size_t limit);
    asio::awaitable<std::vector<view_node>> models(std::int64_t team_id, const view_cursor& from,
                                                   std::size_t limit);
    asio::awaitable<std::vector<view_ref>> refs(std::int64_t model_id, const view_cursor& from,
                                                std::size_t limit);

private:
    pg::pool& pool_;
};

} // namespace depot::registry
