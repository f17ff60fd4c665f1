#pragma once
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

/// A team or a model: a directory level of the view.
struct view_node
{
    std::int64_t id = 0;
    std::string name;
};

/// A ref of a model: a version number, a version label, or an alias of a version that is not archived.
/// When names collide, the ref resolves as the view reads it: number, then label, then alias.
struct view_ref
{
    std::string name;
    std::int64_t version_id = 0;
    std::string created_by; ///< of the version
    time_point created_at;  ///< of the version
};

/// Where a page of one level starts: segments (name + "/") after `bound`, or from it when `inclusive`.
struct view_cursor
{
    std::string bound;
    bool inclusive = true;
};

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
