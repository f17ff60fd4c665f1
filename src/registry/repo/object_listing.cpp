#include "registry/repo/object_listing.hpp"

#include "registry/repo/sql_util.hpp"

namespace depot::registry {

asio::awaitable<std::vector<listing_entry>> list_keys_batch(pg::connection& c, const listing_batch& batch)
{
    // Current keys, or the keys as of a snapshot's sequence number (at most one version of a key matches).
    const std::string visible = batch.as_of == 0 ? "o.superseded_seq IS NULL AND NOT o.is_delete_marker AND "
                                                 : "o.created_seq <= $5 AND (o.superseded_seq IS NULL OR "
                                                   "o.superseded_seq > $5) AND NOT o.is_delete_marker AND ";
    const std::string query =
        std::string("SELECT o.key, o.size, o.etag, " DEPOT_MS(
            "o.last_modified") ", o.owner_id, u.display_name "
                               "FROM object_versions o JOIN users u ON u.id = o.owner_id "
                               "WHERE o.bucket_id = $1 AND ") +
        visible + (batch.inclusive ? "o.key >= $2" : "o.key > $2") +
        " AND ($3 = '' OR o.key < $3) ORDER BY o.key LIMIT $4";
    pg::result_set rs;
    if (batch.as_of == 0)
        rs = co_await sql(c, query, batch.bucket_id, batch.bound, batch.upper, batch.limit);
    else
        rs = co_await sql(c, query, batch.bucket_id, batch.bound, batch.upper, batch.limit, batch.as_of);
    std::vector<listing_entry> out;
    out.reserve(rs.size());
    for (auto r : rs)
        out.push_back(listing_entry{.key = r.str(0),
                                    .size = static_cast<std::uint64_t>(r.i64(1)),
                                    .etag = r.str(2),
                                    .last_modified = from_millis(r.i64(3)),
                                    .owner_id = r.str(4),
                                    .owner_display_name = r.str(5)});
    co_return out;
}

} // namespace depot::registry
