// The tag set column of object version rows (registry/repo/object_tags.hpp).
#include "registry/repo/object_tags.hpp"

#include "registry/repo/sql_util.hpp"

namespace depot::registry {

boost::asio::awaitable<bool> set_version_tags(pg::connection& c, std::int64_t row, std::string_view tags_json)
{
    // Purged rows are only a snapshot's past; a delete marker has no tags.
    auto rs = co_await sql(c,
                           "UPDATE object_versions SET tags = $2::jsonb WHERE id = $1 AND NOT purged AND "
                           "NOT is_delete_marker RETURNING id",
                           row, tags_json);
    co_return !rs.empty();
}

} // namespace depot::registry
