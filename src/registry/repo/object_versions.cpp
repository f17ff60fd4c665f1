#include "registry/repo/object_versions.hpp"

#include "registry/repo/sql_util.hpp"

namespace depot::registry {
namespace {

const std::string version_columns =
    "SELECT o.key, o.version_id, o.created_seq, o.superseded_seq IS NULL, o.is_delete_marker, o.size, "
    "o.etag, " DEPOT_MS(
        "o.last_modified") ", o.owner_id, u.display_name, "
                           "coalesce(o.checksum_algorithm, ''), coalesce(o.checksum_type, '') "
                           "FROM object_versions o JOIN users u ON u.id = o.owner_id "
                           "WHERE o.bucket_id = $1 AND NOT o.purged AND ";

std::vector<version_row> version_rows(const pg::result_set& rs)
{
    std::vector<version_row> out;
    out.reserve(rs.size());
    for (auto r : rs)
        out.push_back(version_row{.entry = version_listing_entry{.key = r.str(0),
                                                                 .version_id = r.str(1),
                                                                 .is_latest = r.boolean(3),
                                                                 .is_delete_marker = r.boolean(4),
                                                                 .size = static_cast<std::uint64_t>(r.i64(5)),
                                                                 .etag = r.str(6),
                                                                 .last_modified = from_millis(r.i64(7)),
                                                                 .owner_id = r.str(8),
                                                                 .owner_display_name = r.str(9),
                                                                 .checksum_algorithm = r.str(10),
                                                                 .checksum_type = r.str(11)},
                                  .created_seq = r.i64(2)});
    return out;
}

} // namespace

asio::awaitable<std::optional<located_version>> lock_version_row(pg::connection& c, std::int64_t bucket_id,
                                                                 std::string_view key,
                                                                 const std::string& version_id)
{
    auto rs = co_await sql(c,
                           "SELECT id, superseded_seq IS NULL, is_delete_marker FROM object_versions "
                           "WHERE bucket_id = $1 AND key = $2 AND version_id = $3 AND NOT purged FOR UPDATE",
                           bucket_id, key, version_id);
    if (rs.empty())
        co_return std::nullopt;
    co_return located_version{rs[0].i64(0), rs[0].boolean(1), rs[0].boolean(2)};
}

asio::awaitable<std::optional<version_conditions_facts>> version_condition_facts(pg::connection& c,
                                                                                 std::int64_t row)
{
    auto rs =
        co_await sql(c,
                     "SELECT etag, size, " DEPOT_MS("last_modified") ", is_delete_marker "
                                                                     "FROM object_versions WHERE id = $1",
                     row);
    if (rs.empty())
        co_return std::nullopt;
    co_return version_conditions_facts{.etag = rs[0].str(0),
                                       .size = rs[0].i64(1),
                                       .last_modified_ms = rs[0].i64(2),
                                       .is_delete_marker = rs[0].boolean(3)};
}

asio::awaitable<std::string> bucket_owner_of(pg::connection& c, std::int64_t bucket_id)
{
    auto owner = co_await sql(c, "SELECT owner_id FROM buckets WHERE id = $1", bucket_id);
    co_return owner[0].str(0);
}

asio::awaitable<std::optional<std::int64_t>> newest_version_row(pg::connection& c, std::int64_t bucket_id,
                                                                std::string_view key)
{
    auto newest = co_await sql(c,
                               "SELECT id FROM object_versions WHERE bucket_id = $1 AND key = $2 "
                               "AND NOT purged ORDER BY created_seq DESC LIMIT 1",
                               bucket_id, key);
    if (newest.empty())
        co_return std::nullopt;
    co_return newest[0].i64(0);
}

asio::awaitable<std::optional<versioning_change>>
update_bucket_versioning(pg::connection& c, std::int64_t bucket_id, std::string_view mode)
{
    auto rs =
        co_await sql(c,
                     "UPDATE buckets SET versioning = CASE WHEN object_lock THEN versioning ELSE $2 END "
                     "WHERE id = $1 RETURNING name, object_lock AND versioning <> $2",
                     bucket_id, mode);
    if (rs.empty())
        co_return std::nullopt;
    co_return versioning_change{.bucket_name = rs[0].str(0), .refused_by_object_lock = rs[0].boolean(1)};
}

asio::awaitable<std::optional<std::int64_t>> version_created_seq(pg::connection& c, std::int64_t bucket_id,
                                                                 std::string_view key,
                                                                 std::string_view version_id)
{
    auto rs = co_await sql(c,
                           "SELECT created_seq FROM object_versions WHERE bucket_id = $1 AND key = $2 "
                           "AND version_id = $3 AND NOT purged",
                           bucket_id, key, version_id);
    if (rs.empty())
        co_return std::nullopt;
    co_return rs[0].i64(0);
}

asio::awaitable<std::vector<version_row>> key_versions_before(pg::connection& c, std::int64_t bucket_id,
                                                              std::string_view key, std::int64_t within,
                                                              std::int64_t limit)
{
    auto rs = co_await sql(
        c, version_columns + "o.key = $2 AND o.created_seq < $3 ORDER BY o.created_seq DESC LIMIT $4",
        bucket_id, key, within, limit);
    co_return version_rows(rs);
}

asio::awaitable<std::vector<version_row>> versions_from(pg::connection& c, std::int64_t bucket_id,
                                                        std::string_view bound, bool inclusive,
                                                        std::string_view upper, std::int64_t limit)
{
    auto rs = co_await sql(c,
                           version_columns + (inclusive ? "o.key >= $2" : "o.key > $2") +
                               " AND ($3 = '' OR o.key < $3) ORDER BY o.key, o.created_seq DESC LIMIT $4",
                           bucket_id, bound, upper, limit);
    co_return version_rows(rs);
}

} // namespace depot::registry
