// The SQL of snapshots (registry/repo/snapshots.hpp).
#include "registry/repo/snapshots.hpp"

#include "registry/repo/sql_util.hpp"

namespace depot::registry {
namespace {

constexpr const char* snapshot_columns =
    "id, bucket_id, name, prefix, seq, created_by, " DEPOT_MS("created_at");

snapshot snapshot_from(const pg::row& r)
{
    snapshot s;
    s.id = r.i64(0);
    s.bucket_id = r.i64(1);
    s.name = r.str(2);
    s.prefix = r.str(3);
    s.seq = r.i64(4);
    s.created_by = r.str(5);
    s.created_at = from_millis(r.i64(6));
    return s;
}

} // namespace

asio::awaitable<std::optional<snapshot>> insert_snapshot(pg::connection& c, std::int64_t bucket_id,
                                                         std::string_view name, std::string_view prefix,
                                                         std::string_view created_by)
{
    auto rs = co_await sql(c,
                           std::string("INSERT INTO snapshots (bucket_id, name, prefix, seq, created_by) "
                                       "VALUES ($1, $2, $3, nextval('commit_seq'), $4) "
                                       "ON CONFLICT (bucket_id, name) DO NOTHING RETURNING ") +
                               snapshot_columns,
                           bucket_id, name, prefix, created_by);
    if (rs.empty())
        co_return std::nullopt;
    co_return snapshot_from(rs[0]);
}

asio::awaitable<std::optional<snapshot>> find_snapshot(pg::connection& c, std::int64_t bucket_id,
                                                       std::string_view name)
{
    auto rs = co_await sql(
        c, std::string("SELECT ") + snapshot_columns + " FROM snapshots WHERE bucket_id = $1 AND name = $2",
        bucket_id, name);
    if (rs.empty())
        co_return std::nullopt;
    co_return snapshot_from(rs[0]);
}

asio::awaitable<std::vector<snapshot>> snapshots_after(pg::connection& c, std::int64_t bucket_id,
                                                       std::string_view after, std::int64_t limit)
{
    auto rs = co_await sql(c,
                           std::string("SELECT ") + snapshot_columns +
                               " FROM snapshots WHERE bucket_id = $1 AND name > $2 ORDER BY name LIMIT $3",
                           bucket_id, after, limit);
    std::vector<snapshot> out;
    for (auto r : rs)
        out.push_back(snapshot_from(r));
    co_return out;
}

asio::awaitable<bool> delete_snapshot(pg::connection& c, std::int64_t bucket_id, std::string_view name)
{
    auto gone = co_await sql(c, "DELETE FROM snapshots WHERE bucket_id = $1 AND name = $2 RETURNING id",
                             bucket_id, name);
    co_return !gone.empty();
}

namespace {

/// The bucket's ($1) purged version rows `o` that no remaining snapshot sees: what deleting a snapshot
/// deletes for good.
constexpr std::string_view unseen_purged =
    "o.bucket_id = $1 AND o.purged AND NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.bucket_id = $1 AND "
    "s.seq >= o.created_seq AND s.seq < o.superseded_seq AND starts_with(o.key, s.prefix))";

} // namespace

asio::awaitable<std::vector<std::string>> unseen_purged_keys(pg::connection& c, std::int64_t bucket_id)
{
    auto rs = co_await sql(c,
                           "SELECT DISTINCT o.key FROM object_versions o WHERE " +
                               std::string(unseen_purged) + " ORDER BY o.key",
                           bucket_id);
    co_return first_texts(rs);
}

asio::awaitable<std::vector<std::int64_t>> delete_unseen_purged_versions(pg::connection& c,
                                                                         std::int64_t bucket_id)
{
    auto segs =
        co_await sql(c,
                     "WITH gone AS (DELETE FROM object_versions o WHERE " + std::string(unseen_purged) +
                         " RETURNING o.id) SELECT s.blob_id FROM object_segments s JOIN gone g ON "
                         "g.id = s.version_row",
                     bucket_id);
    co_return first_column(segs);
}

} // namespace depot::registry
