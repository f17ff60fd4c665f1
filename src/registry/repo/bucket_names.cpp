// A bucket's name by its row id (registry/repo/bucket_names.hpp).
#include "registry/repo/bucket_names.hpp"

#include "registry/repo/sql_util.hpp"

namespace depot::registry {

boost::asio::awaitable<std::string> bucket_name_of(pg::connection& c, std::int64_t bucket_id)
{
    auto rs = co_await sql(c, "SELECT name FROM buckets WHERE id = $1", bucket_id);
    co_return rs.empty() ? std::string() : rs[0].str(0);
}

} // namespace depot::registry
