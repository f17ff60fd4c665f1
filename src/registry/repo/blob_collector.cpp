#include "registry/repo/blob_collector.hpp"

#include "registry/repo/sql_util.hpp"

namespace depot::registry {
namespace {

/// References each blob row actually has: one per object segment and per multipart part segment.
constexpr const char* actual_references =
    "(SELECT count(*) FROM object_segments s WHERE s.blob_id = b.id) + "
    "(SELECT count(*) FROM multipart_part_segments p WHERE p.blob_id = b.id) + "
    "(SELECT count(*) FROM model_file_segments m WHERE m.blob_id = b.id)";

} // namespace

asio::awaitable<std::size_t> delete_lapsed_intents(pg::connection& c)
{
    auto lapsed = co_await sql(c, "DELETE FROM blob_intents WHERE expires_at < now() RETURNING store_id");
    co_return static_cast<std::size_t>(lapsed.size());
}

asio::awaitable<std::vector<std::string>> known_store_ids(pg::connection& c, const std::string& ids,
                                                          bool live_intents_only)
{
    auto rs = co_await sql(c,
                           "SELECT store_id FROM blobs WHERE store_id = ANY($1::text[]) UNION ALL "
                           "SELECT store_id FROM blob_intents WHERE store_id = ANY($1::text[]) "
                           "AND (NOT $2 OR expires_at >= now())",
                           ids, live_intents_only);
    co_return first_texts(rs);
}

asio::awaitable<std::vector<blob_row_size>> blob_rows_after(pg::connection& c, const std::string& after)
{
    auto rs = co_await sql(c,
                           "SELECT store_id, size, sealed IS NOT NULL FROM blobs WHERE store_id COLLATE "
                           "\"C\" > $1 "
                           "ORDER BY store_id COLLATE \"C\" LIMIT 1000",
                           after);
    std::vector<blob_row_size> out;
    out.reserve(rs.size());
    for (auto r : rs)
        out.push_back(blob_row_size{.store_id = r.str(0), .size = r.i64(1), .sealed = r.boolean(2)});
    co_return out;
}

asio::awaitable<std::vector<std::string>> intent_store_ids(pg::connection& c, const std::string& ids)
{
    auto held = co_await sql(c, "SELECT store_id FROM blob_intents WHERE store_id = ANY($1::text[])", ids);
    co_return first_texts(held);
}

asio::awaitable<std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>>
refcount_mismatches(pg::connection& c)
{
    auto rs = co_await sql(c, std::string("SELECT id, refcount, actual FROM (SELECT b.id, b.refcount, ") +
                                  actual_references +
                                  " AS actual FROM blobs b) x WHERE refcount <> actual "
                                  "ORDER BY id");
    std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> out;
    out.reserve(rs.size());
    for (auto r : rs)
        out.emplace_back(r.i64(0), r.i64(1), r.i64(2));
    co_return out;
}

asio::awaitable<std::size_t> correct_refcounts(pg::connection& c)
{
    auto fixed = co_await sql(c, std::string("UPDATE blobs b SET refcount = ") + actual_references +
                                     " WHERE b.refcount <> " + actual_references + " RETURNING id");
    co_return static_cast<std::size_t>(fixed.size());
}

asio::awaitable<std::vector<std::string>> delete_zero_refcount_blobs(pg::connection& c)
{
    auto gone = co_await sql(c, "DELETE FROM blobs WHERE refcount = 0 RETURNING store_id");
    std::vector<std::string> out;
    out.reserve(gone.size());
    for (auto r : gone)
        out.push_back(r.str(0));
    co_return out;
}

} // namespace depot::registry
