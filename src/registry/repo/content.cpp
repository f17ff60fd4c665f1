#include "registry/repo/content.hpp"

#include "registry/repo/sql_util.hpp"

namespace depot::registry {

asio::awaitable<std::int64_t> insert_intent(pg::connection& c, const std::string& store_id,
                                            const std::string& owner, const std::string& upload,
                                            std::int64_t lease_seconds)
{
    // The subquery sees the rows as they were before this insert.
    auto rs = co_await sql(c,
                           "INSERT INTO blob_intents (store_id, owner, upload, expires_at) "
                           "VALUES ($1, $2, $3, now() + $4 * interval '1 second') "
                           "RETURNING (SELECT count(*) FROM blob_intents WHERE upload = $3)",
                           store_id, owner, upload, lease_seconds);
    co_return rs[0].i64(0);
}

asio::awaitable<void> delete_upload_intents(pg::connection& c, const std::string& upload)
{
    co_await sql(c, "DELETE FROM blob_intents WHERE upload = $1", upload);
}

asio::awaitable<void> renew_owner_intents(pg::connection& c, const std::string& owner,
                                          std::int64_t lease_seconds)
{
    co_await sql(c, "UPDATE blob_intents SET expires_at = now() + $2 * interval '1 second' WHERE owner = $1",
                 owner, lease_seconds);
}

pg::statement take_intents_statement(const std::string& upload)
{
    return statement_of("DELETE FROM blob_intents WHERE upload = $1 RETURNING store_id", upload);
}

pg::statement shared_blob_statement(const std::string& store_id, std::uint64_t size, const pg::bytes& sha256,
                                    const pg::bytes& md5)
{
    return statement_of(
        "INSERT INTO blobs (store_id, size, sha256, md5, refcount) VALUES ($1, $2, $3, $4, 1) "
        "ON CONFLICT (sha256, size) WHERE shared DO UPDATE SET refcount = blobs.refcount + 1 "
        "RETURNING id, store_id",
        store_id, size, sha256, md5);
}

pg::statement private_blob_statement(const std::string& store_id, std::uint64_t size, const pg::bytes& sha256,
                                     const pg::bytes& md5, const std::string& sealed)
{
    return statement_of("INSERT INTO blobs (store_id, size, sha256, md5, refcount, shared, sealed) "
                        "VALUES ($1, $2, $3, $4, 1, false, nullif($5, '')) RETURNING id, store_id",
                        store_id, size, sha256, md5, sealed);
}

asio::awaitable<void> add_blob_references(pg::connection& c, const std::string& rows)
{
    co_await sql(
        c,
        "WITH r AS (SELECT unnest($1::bigint[]) AS id), n AS (SELECT id, count(*) AS k FROM r GROUP BY id) "
        "UPDATE blobs b SET refcount = b.refcount + n.k FROM n WHERE b.id = n.id",
        rows);
}

asio::awaitable<void> subtract_blob_references(pg::connection& c, const std::string& rows)
{
    co_await sql(
        c,
        "WITH r AS (SELECT unnest($1::bigint[]) AS id), n AS (SELECT id, count(*) AS k FROM r GROUP BY id) "
        "UPDATE blobs b SET refcount = b.refcount - n.k FROM n WHERE b.id = n.id",
        rows);
}

asio::awaitable<std::vector<std::string>> delete_unreferenced_blobs(pg::connection& c,
                                                                    const std::string& rows)
{
    auto gone = co_await sql(
        c, "DELETE FROM blobs WHERE id = ANY($1::bigint[]) AND refcount = 0 RETURNING store_id", rows);
    std::vector<std::string> out;
    out.reserve(gone.size());
    for (auto r : gone)
        out.push_back(r.str(0));
    co_return out;
}

void defer_insert_segments(pg::connection& c, std::int64_t row, const std::string& blobs,
                           const std::string& offsets, const std::string& lengths, const std::string& parts)
{
    defer_sql(c,
              "INSERT INTO object_segments (version_row, ordinal, blob_id, blob_offset, length, part_number) "
              "SELECT $1, s.ord - 1, s.blob, s.off, s.len, nullif(s.part, 0)::int "
              "FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[]) "
              "WITH ORDINALITY AS s(blob, off, len, part, ord)",
              row, blobs, offsets, lengths, parts);
}

} // namespace depot::registry
