// The SQL of multipart uploads (registry/repo/multipart_uploads.hpp).
#include "registry/repo/multipart_uploads.hpp"

#include "common/json.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/repo/versions.hpp"
#include "registry/service/sse.hpp"

namespace depot::registry {
namespace {

constexpr const char* upload_columns =
    "m.id, m.upload_id, m.bucket_id, m.key, m.owner_id, u.display_name, " DEPOT_MS(
        "m.initiated_at") ", m.content_type, m.content_encoding, m.content_disposition, m.content_language, "
                          "m.cache_control, "
                          "m.expires, m.user_metadata::text, coalesce(m.checksum_algorithm, ''), "
                          "coalesce(m.checksum_type, ''), m.tags::text, coalesce(m.lock_mode, ''), "
                          "coalesce(" DEPOT_MS(
                              "m.lock_until") ", 0), m.legal_hold, coalesce(m.sse, ''), m.sse_key_check, "
                                              "coalesce(m.acl, '')";

multipart_upload upload_from(const pg::row& r)
{
    multipart_upload m;
    m.row = r.i64(0);
    m.upload_id = r.str(1);
    m.bucket_id = r.i64(2);
    m.key = r.str(3);
    m.owner_id = r.str(4);
    m.owner_display_name = r.str(5);
    m.initiated = from_millis(r.i64(6));
    m.headers.content_type = r.opt_str(7);
    m.headers.content_encoding = r.opt_str(8);
    m.headers.content_disposition = r.opt_str(9);
    m.headers.content_language = r.opt_str(10);
    m.headers.cache_control = r.opt_str(11);
    m.headers.expires = r.opt_str(12);
    m.headers.user_metadata = metadata_from_json(r.text(13));
    m.algorithm = parse_checksum_algorithm(r.text(14));
    m.type = parse_checksum_type(r.text(15)).value_or(checksum_type::full_object);
    m.tags = tags_from_json(r.text(16));
    if (auto mode = s3::parse_retention_mode(r.text(17)))
        m.retention = s3::retention{.mode = *mode, .retain_until = from_millis(r.i64(18))};
    m.legal_hold = r.opt_boolean(19);
    m.sse = r.str(20);
    m.sse_key_check = r.is_null(21) ? std::string() : r.bytea(21);
    m.acl = r.str(22);
    return m;
}

} // namespace

asio::awaitable<multipart_upload> insert_upload(pg::connection& c, const upload_insert& u)
{
    const std::string insert =
        std::string(
            "WITH m AS (INSERT INTO multipart_uploads (upload_id, bucket_id, key, owner_id, "
            "content_type, content_encoding, content_disposition, content_language, "
            "cache_control, expires, user_metadata, checksum_algorithm, checksum_type, tags, lock_mode, "
            "lock_until, legal_hold, sse, sse_key_check, acl) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, nullif($12, ''), "
            "nullif($13, ''), $14::jsonb, nullif($15, ''), CASE WHEN $15 = '' THEN NULL ELSE "
            "to_timestamp($16::double precision / 1000) END, $17::boolean, nullif($18, ''), $19, "
            "nullif($20, '')) RETURNING *) SELECT ") +
        upload_columns + " FROM m JOIN users u ON u.id = m.owner_id";
    const auto& h = u.headers;
    const auto key_check = u.sse_key_check ? pg::param(pg::bytes(*u.sse_key_check)) : pg::param(std::nullopt);
    auto rs = co_await sql(c, insert, u.upload_id, u.bucket_id, u.key, u.owner_id, h.content_type,
                           h.content_encoding, h.content_disposition, h.content_language, h.cache_control,
                           h.expires, u.metadata_json, u.checksum_algorithm, u.checksum_type, u.tags_json,
                           u.lock_mode, u.lock_until_ms, u.legal_hold, u.sse, key_check, u.acl);
    co_return upload_from(rs[0]);
}

asio::awaitable<std::optional<multipart_upload>> find_upload(pg::connection& c, std::int64_t bucket_id,
                                                             std::string_view key, std::string_view upload_id)
{
    auto rs = co_await sql(c,
                           std::string("SELECT ") + upload_columns +
                               " FROM multipart_uploads m JOIN users u ON u.id = m.owner_id "
                               "WHERE m.upload_id = $1 AND m.bucket_id = $2 AND m.key = $3",
                           upload_id, bucket_id, key);
    if (rs.empty())
        co_return std::nullopt;
    co_return upload_from(rs[0]);
}

asio::awaitable<std::optional<std::int64_t>> lock_upload(pg::connection& c, std::int64_t row, bool exclusive)
{
    auto rs = co_await sql(c,
                           std::string("SELECT id FROM multipart_uploads WHERE id = $1 ") +
                               (exclusive ? "FOR UPDATE" : "FOR SHARE"),
                           row);
    if (rs.empty())
        co_return std::nullopt;
    co_return rs[0].i64(0);
}

asio::awaitable<bool> lock_copy_source(pg::connection& c, std::int64_t row, bool pinned)
{
    auto rs = co_await sql(c,
                           "SELECT 1 FROM object_versions WHERE id = $1 AND ($2 OR superseded_seq IS NULL) "
                           "AND NOT is_delete_marker FOR SHARE",
                           row, pinned);
    co_return !rs.empty();
}

asio::awaitable<std::vector<std::int64_t>> delete_part(pg::connection& c, std::int64_t upload_row,
                                                       int part_number)
{
    auto segs =
        co_await sql(c,
                     "WITH p AS (DELETE FROM multipart_parts WHERE upload_row = $1 AND part_number = $2) "
                     "SELECT blob_id FROM multipart_part_segments WHERE upload_row = $1 AND part_number = $2",
                     upload_row, part_number);
    co_return first_column(segs);
}

asio::awaitable<time_point> insert_part(pg::connection& c, const part_row& part,
                                        const std::vector<segment>& segments)
{
    const pg::bytes crc(part.crc64nvme);
    auto rs =
        co_await sql(c,
                     "INSERT INTO multipart_parts (upload_row, part_number, size, etag, checksum, crc64nvme) "
                     "VALUES ($1, $2, $3, $4, nullif($5, ''), $6) RETURNING " DEPOT_MS("uploaded_at"),
                     part.upload_row, part.part_number, part.size, part.etag, part.checksum, crc);
    std::vector<std::int64_t> blobs, offsets, lengths;
    for (const auto& s : segments) {
        blobs.push_back(s.blob_row);
        offsets.push_back(static_cast<std::int64_t>(s.offset));
        lengths.push_back(static_cast<std::int64_t>(s.length));
    }
    const std::string b = bigint_array(blobs), o = bigint_array(offsets), l = bigint_array(lengths);
    co_await sql(
        c,
        "INSERT INTO multipart_part_segments (upload_row, part_number, ordinal, blob_id, blob_offset, "
        "length) SELECT $1, $2, s.ord - 1, s.blob, s.off, s.len "
        "FROM unnest($3::bigint[], $4::bigint[], $5::bigint[]) WITH ORDINALITY AS s(blob, off, len, ord)",
        part.upload_row, part.part_number, b, o, l);
    co_return from_millis(rs[0].i64(0));
}

asio::awaitable<std::vector<part_info>> parts_after(pg::connection& c, std::int64_t upload_row, int marker,
                                                    int limit)
{
    auto rs =
        co_await sql(c,
                     "SELECT part_number, size, etag, " DEPOT_MS(
                         "uploaded_at") ", coalesce(checksum, '') "
                                        "FROM multipart_parts WHERE upload_row = $1 AND part_number > $2 "
                                        "ORDER BY part_number LIMIT $3",
                     upload_row, marker, limit);
    std::vector<part_info> parts;
    for (auto r : rs)
        parts.push_back(part_info{.part_number = static_cast<int>(r.i64(0)),
                                  .size = static_cast<std::uint64_t>(r.i64(1)),
                                  .etag = r.str(2),
                                  .last_modified = from_millis(r.i64(3)),
                                  .checksum = r.str(4)});
    co_return parts;
}

asio::awaitable<std::optional<object_version>>
version_of_upload(pg::connection& c, std::int64_t bucket_id, std::string_view key, std::string_view upload_id)
{
    auto rs = co_await sql(c,
                           "SELECT id, version_id, etag, size, coalesce(checksum_algorithm, ''), "
                           "coalesce(checksum_type, ''), coalesce(checksum_value, '') FROM object_versions "
                           "WHERE bucket_id = $1 AND key = $2 AND upload_id = $3 AND NOT purged "
                           "AND NOT is_delete_marker",
                           bucket_id, key, upload_id);
    if (rs.empty())
        co_return std::nullopt;
    object_version v;
    v.bucket_id = bucket_id;
    v.key = std::string(key);
    v.row_id = rs[0].i64(0);
    v.version_id = rs[0].str(1);
    v.etag = rs[0].str(2);
    v.size = static_cast<std::uint64_t>(rs[0].i64(3));
    v.checksum_algorithm = rs[0].str(4);
    v.checksum_type = rs[0].str(5);
    v.checksum_value = rs[0].str(6);
    co_return v;
}

asio::awaitable<std::map<int, stored_part>> stored_parts(pg::connection& c, std::int64_t upload_row)
{
    std::map<int, stored_part> stored;
    auto parts = co_await sql(c,
                              "SELECT part_number, size, etag, coalesce(checksum, ''), crc64nvme "
                              "FROM multipart_parts WHERE upload_row = $1",
                              upload_row);
    for (auto r : parts)
        stored[static_cast<int>(r.i64(0))] =
            stored_part{static_cast<std::uint64_t>(r.i64(1)), r.str(2), r.str(3), r.bytea(4), {}};
    auto segs =
        co_await sql(c,
                     "SELECT s.part_number, s.blob_id, b.store_id, s.blob_offset, s.length, "
                     "coalesce(b.sealed, '') FROM multipart_part_segments s JOIN blobs b ON b.id = s.blob_id "
                     "WHERE s.upload_row = $1 ORDER BY s.part_number, s.ordinal",
                     upload_row);
    for (auto r : segs)
        stored[static_cast<int>(r.i64(0))].segments.push_back(
            segment{.blob_row = r.i64(1),
                    .store_id = r.str(2),
                    .offset = static_cast<std::uint64_t>(r.i64(3)),
                    .length = static_cast<std::uint64_t>(r.i64(4)),
                    .part_number = static_cast<int>(r.i64(0)),
                    .sealed = sealing_from_column(r.str(5))});
    co_return stored;
}

asio::awaitable<void> delete_upload(pg::connection& c, std::int64_t upload_row)
{
    co_await sql(c, "DELETE FROM multipart_uploads WHERE id = $1", upload_row);
}

asio::awaitable<void> set_version_upload(pg::connection& c, std::int64_t version_row,
                                         std::string_view upload_id)
{
    co_await sql(c, "UPDATE object_versions SET upload_id = $2 WHERE id = $1", version_row, upload_id);
}

asio::awaitable<void> insert_object_parts(pg::connection& c, std::int64_t version_row,
                                          const object_part_rows& parts)
{
    const std::string numbers = bigint_array(parts.numbers), offsets = bigint_array(parts.offsets),
                      sizes = bigint_array(parts.sizes);
    boost::json::array sums;
    sums.reserve(parts.checksums.size());
    for (const auto& sum : parts.checksums)
        sums.push_back(json_string(sum));
    const std::string sums_json = boost::json::serialize(sums);
    co_await sql(
        c,
        "INSERT INTO object_parts (version_row, part_number, offset_in_object, size, checksum) "
        "SELECT $1, p.n, p.o, p.s, nullif(c.value #>> '{}', '') FROM unnest($2::bigint[], $3::bigint[], "
        "$4::bigint[]) WITH ORDINALITY AS p(n, o, s, ord) "
        "JOIN jsonb_array_elements($5::jsonb) WITH ORDINALITY AS c(value, ord) ON c.ord = p.ord",
        version_row, numbers, offsets, sizes, sums_json);
}

asio::awaitable<removed_upload> delete_upload_returning(pg::connection& c, std::int64_t row)
{
    auto upload =
        co_await sql(c, "SELECT bucket_id, key, upload_id FROM multipart_uploads WHERE id = $1", row);
    auto segs = co_await sql(c,
                             "WITH m AS (DELETE FROM multipart_uploads WHERE id = $1) "
                             "SELECT blob_id FROM multipart_part_segments WHERE upload_row = $1",
                             row);
    co_return removed_upload{.bucket_id = upload[0].i64(0),
                             .key = upload[0].str(1),
                             .upload_id = upload[0].str(2),
                             .blob_rows = first_column(segs)};
}

asio::awaitable<std::vector<multipart_upload>> uploads_after(pg::connection& c, const uploads_seek& seek)
{
    auto rs = co_await sql(
        c,
        std::string("SELECT ") + upload_columns +
            " FROM multipart_uploads m JOIN users u ON u.id = m.owner_id "
            "WHERE m.bucket_id = $1 AND (m.key > $2 OR (m.key = $2 AND NOT $5 AND "
            "m.id > coalesce((SELECT id FROM multipart_uploads WHERE upload_id = $3), 0))) "
            "AND m.key >= $4 ORDER BY m.key, m.id LIMIT $6",
        seek.bucket_id, seek.key_bound, seek.id_bound, seek.prefix, seek.skip_key_bound, seek.limit);
    std::vector<multipart_upload> uploads;
    for (auto r : rs)
        uploads.push_back(upload_from(r));
    co_return uploads;
}

asio::awaitable<std::vector<std::int64_t>> upload_rows_of(pg::connection& c, std::int64_t bucket_id)
{
    auto rs = co_await sql(c, "SELECT id FROM multipart_uploads WHERE bucket_id = $1", bucket_id);
    co_return first_column(rs);
}

asio::awaitable<std::vector<std::int64_t>> upload_rows_initiated_before(pg::connection& c,
                                                                        std::int64_t cutoff_ms)
{
    auto rs = co_await sql(c,
                           "SELECT id FROM multipart_uploads WHERE initiated_at < to_timestamp($1::double "
                           "precision / 1000) ORDER BY initiated_at LIMIT 10000",
                           cutoff_ms);
    co_return first_column(rs);
}

} // namespace depot::registry
