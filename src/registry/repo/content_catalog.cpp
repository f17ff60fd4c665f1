#include "registry/repo/content_catalog.hpp"

#include "common/hash.hpp"
#include "registry/repo/sql_util.hpp"

namespace depot::registry {
namespace {

/// A text[] literal of hex strings (hex needs no quoting).
std::string hex_array(const std::vector<std::string>& raw)
{
    std::string out = "{";
    for (std::size_t i = 0; i < raw.size(); ++i) {
        if (i)
            out += ',';
        out += to_hex(raw[i]);
    }
    return out + "}";
}

// The version rows and blobs of a set of buckets ($1 names them), for usage figures. Rows kept only for
// snapshots (purged) are no objects or versions of the bucket, but their blobs cost space.
constexpr const char* usage_sql =
    "WITH v AS (SELECT id, size, superseded_seq, purged FROM object_versions "
    "           WHERE bucket_id IN (%BUCKETS%) AND NOT is_delete_marker), "
    "b AS (SELECT DISTINCT s.blob_id FROM object_segments s JOIN v ON v.id = s.version_row) "
    "SELECT (SELECT count(*) FROM v WHERE superseded_seq IS NULL), (SELECT count(*) FROM v WHERE NOT "
    "purged), "
    "       (SELECT coalesce(sum(size), 0) FROM v WHERE NOT purged)::bigint, "
    "       (SELECT coalesce(sum(bl.size), 0) FROM blobs bl JOIN b ON b.blob_id = bl.id)::bigint";

std::string usage_statement(std::string_view buckets)
{
    std::string s = usage_sql;
    s.replace(s.find("%BUCKETS%"), 9, buckets);
    return s;
}

usage usage_from(const pg::row& r)
{
    return usage{
        .objects = r.i64(0), .versions = r.i64(1), .logical_bytes = r.i64(2), .physical_bytes = r.i64(3)};
}

} // namespace

asio::awaitable<std::vector<content_match>> content_catalog::lookup(std::string_view owner_id,
                                                                    const std::vector<std::string>& digests)
{
    std::vector<content_match> out;
    if (digests.empty())
        co_return out;
    const auto wanted = hex_array(digests);
    auto conn = co_await pool_.acquire();
    auto rs =
        co_await sql(*conn,
                     "SELECT DISTINCT v.sha256, v.size FROM object_versions v "
                     "JOIN buckets b ON b.id = v.bucket_id "
                     "WHERE b.owner_id = $1 AND NOT v.is_delete_marker AND NOT v.purged AND v.sse IS NULL "
                     "AND v.sha256 IN "
                     "(SELECT decode(h, 'hex') FROM unnest($2::text[]) AS h) "
                     "ORDER BY 1, 2",
                     owner_id, wanted);
    for (auto r : rs)
        out.push_back({r.bytea(0), static_cast<std::uint64_t>(r.i64(1))});
    co_return out;
}

asio::awaitable<std::optional<content_source>> content_catalog::find_source(std::string_view owner_id,
                                                                            std::string_view sha256,
                                                                            std::uint64_t size,
                                                                            const scope_area* within)
{
    const pg::bytes digest{std::string(sha256)};
    // An area with no bucket reaches nothing: no bucket has the empty name.
    const bool confined = within != nullptr;
    const std::string area_bucket = confined ? within->bucket : std::string();
    const std::string area_prefix = confined ? within->prefix : std::string();
    auto conn = co_await pool_.acquire();
    auto rs =
        co_await sql(*conn,
                     "SELECT b.name, v.key, v.version_id, v.id FROM object_versions v "
                     "JOIN buckets b ON b.id = v.bucket_id "
                     "WHERE v.sha256 = $2 AND v.size = $3 AND b.owner_id = $1 AND NOT v.is_delete_marker "
                     "AND NOT v.purged AND v.sse IS NULL AND (NOT $4::boolean OR (b.name = $5::text AND "
                     "starts_with(v.key, $6::text))) "
                     "ORDER BY v.superseded_seq IS NULL DESC, v.id DESC LIMIT 1",
                     owner_id, digest, static_cast<std::int64_t>(size), confined, area_bucket, area_prefix);
    if (rs.empty())
        co_return std::nullopt;
    co_return content_source{rs[0].str(0), rs[0].str(1), rs[0].str(2), rs[0].i64(3)};
}

asio::awaitable<usage> content_catalog::bucket_usage(std::int64_t bucket_id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn, usage_statement("$1"), bucket_id);
    auto u = usage_from(rs[0]);
    u.buckets = 1;
    co_return u;
}

asio::awaitable<usage> content_catalog::owner_usage(std::string_view owner_id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn,
                           usage_statement("SELECT id FROM buckets WHERE owner_id = $1") +
                               ", (SELECT count(*) FROM buckets "
                               "WHERE owner_id = $1)",
                           owner_id);
    auto u = usage_from(rs[0]);
    u.buckets = rs[0].i64(4);
    co_return u;
}

} // namespace depot::registry
