#include "registry/repo/objects.hpp"

#include "common/json.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/repo/versions.hpp"
#include "registry/service/sse.hpp"
#include "s3/object_lock.hpp"

namespace depot::registry {
namespace {

/// Columns of a version row followed by its segments as JSON, in the order `version_from` reads them.
constexpr const char* object_version_columns =
    "o.id, o.bucket_id, o.key, o.version_id, o.is_delete_marker, o.size, o.etag, o.sha256, o.owner_id, "
    "u.display_name, " DEPOT_MS(
        "o.last_modified") ", o.content_type, o.content_encoding, "
                           "o.content_disposition, o.content_language, o.cache_control, o.expires, "
                           "o.user_metadata::text, "
                           "o.parts_count, "
                           "(SELECT coalesce(json_agg(json_build_array(s.blob_id, b.store_id, s.blob_offset, "
                           "s.length, "
                           "coalesce(s.part_number, 0), coalesce(b.sealed, '')) ORDER BY s.ordinal), '[]') "
                           "FROM object_segments s JOIN blobs b ON b.id = s.blob_id WHERE s.version_row = "
                           "o.id)::text, "
                           "coalesce(o.checksum_algorithm, ''), coalesce(o.checksum_type, ''), "
                           "coalesce(o.checksum_value, ''), o.tags::text, coalesce(o.lock_mode, ''), "
                           "coalesce(" DEPOT_MS(
                               "o.lock_until") ", 0), o.legal_hold, coalesce(o.sse, ''), o.sse_key_check";

object_handle handle_from(const pg::row& r)
{
    object_handle h;
    auto& v = h.version;
    v.row_id = r.i64(0);
    v.bucket_id = r.i64(1);
    v.key = r.str(2);
    v.version_id = r.str(3);
    v.is_delete_marker = r.boolean(4);
    v.size = static_cast<std::uint64_t>(r.i64(5));
    v.etag = r.str(6);
    v.sha256 = r.is_null(7) ? std::string() : r.bytea(7);
    v.owner_id = r.str(8);
    v.owner_display_name = r.str(9);
    v.last_modified = from_millis(r.i64(10));
    v.headers.content_type = r.opt_str(11);
    v.headers.content_encoding = r.opt_str(12);
    v.headers.content_disposition = r.opt_str(13);
    v.headers.content_language = r.opt_str(14);
    v.headers.cache_control = r.opt_str(15);
    v.headers.expires = r.opt_str(16);
    v.headers.user_metadata = metadata_from_json(r.text(17));
    if (!r.is_null(18))
        v.parts_count = static_cast<int>(r.i64(18));
    v.checksum_algorithm = r.str(20);
    v.checksum_type = r.str(21);
    v.checksum_value = r.str(22);
    v.tags = tags_from_json(r.text(23));
    if (auto mode = s3::parse_retention_mode(r.text(24)))
        v.retention = s3::retention{.mode = *mode, .retain_until = from_millis(r.i64(25))};
    v.legal_hold = r.opt_boolean(26);
    v.sse = r.str(27);
    v.sse_key_check = r.is_null(28) ? std::string() : r.bytea(28);
    // [[blob_row, store_id, offset, length, part_number, sealing], ...] (json_agg of the version's segments;
    // read on every GET: Boost.JSON's parser is why this is cheap). Throws on a malformed column.
    const auto segments = boost::json::parse(r.text(19));
    for (const auto& value : segments.as_array()) {
        const auto& s = value.as_array();
        h.segments.push_back(segment{.blob_row = s.at(0).to_number<std::int64_t>(),
                                     .store_id = std::string(s.at(1).as_string()),
                                     .offset = s.at(2).to_number<std::uint64_t>(),
                                     .length = s.at(3).to_number<std::uint64_t>(),
                                     .part_number = s.at(4).to_number<int>(),
                                     .sealed = sealing_from_column(s.at(5).as_string())});
    }
    return h;
}

std::optional<object_handle> first_handle(const pg::result_set& rs)
{
    if (rs.empty())
        return std::nullopt;
    return handle_from(rs[0]);
}

} // namespace

asio::awaitable<std::optional<object_handle>>
current_object_version(pg::connection& c, std::int64_t bucket_id, std::string_view key)
{
    auto rs = co_await sql(c,
                           std::string("SELECT ") + object_version_columns +
                               " FROM object_versions o JOIN users u ON u.id = o.owner_id "
                               "WHERE o.bucket_id = $1 AND o.key = $2 AND o.superseded_seq IS NULL",
                           bucket_id, key);
    co_return first_handle(rs);
}

asio::awaitable<std::optional<object_handle>> object_version_by_id(pg::connection& c, std::int64_t bucket_id,
                                                                   std::string_view key,
                                                                   const std::string& version_id)
{
    const std::string select = std::string("SELECT ") + object_version_columns +
                               " FROM object_versions o JOIN users u ON u.id = o.owner_id "
                               "WHERE o.bucket_id = $1 AND o.key = $2 AND ";
    auto rs = co_await sql(c, select + "o.version_id = $3 AND NOT o.purged", bucket_id, key, version_id);
    co_return first_handle(rs);
}

asio::awaitable<std::optional<object_handle>> object_version_as_of(pg::connection& c, std::int64_t bucket_id,
                                                                   std::string_view key, std::int64_t as_of)
{
    auto rs =
        co_await sql(c,
                     std::string("SELECT ") + object_version_columns +
                         " FROM object_versions o JOIN users u ON u.id = o.owner_id "
                         "WHERE o.bucket_id = $1 AND o.key = $2 AND o.created_seq <= $3 AND "
                         "(o.superseded_seq IS NULL OR o.superseded_seq > $3) AND NOT o.is_delete_marker",
                     bucket_id, key, as_of);
    co_return first_handle(rs);
}

asio::awaitable<std::vector<object_part_info>> object_parts_of(pg::connection& c, std::int64_t version_row)
{
    auto rs =
        co_await sql(c,
                     "SELECT part_number, offset_in_object, size, coalesce(checksum, '') FROM object_parts "
                     "WHERE version_row = $1 ORDER BY part_number",
                     version_row);
    std::vector<object_part_info> out;
    for (auto r : rs)
        out.push_back(object_part_info{.part_number = static_cast<int>(r.i64(0)),
                                       .offset = static_cast<std::uint64_t>(r.i64(1)),
                                       .size = static_cast<std::uint64_t>(r.i64(2)),
                                       .checksum = r.str(3)});
    co_return out;
}

asio::awaitable<std::optional<object_handle>> share_copy_source(pg::connection& c, std::int64_t row,
                                                                bool pinned)
{
    auto src = co_await sql(c,
                            std::string("SELECT ") + object_version_columns +
                                " FROM object_versions o JOIN users u ON u.id = o.owner_id "
                                "WHERE o.id = $1 AND ($2 OR o.superseded_seq IS NULL) AND NOT "
                                "o.is_delete_marker FOR SHARE OF o",
                            row, pinned);
    co_return first_handle(src);
}

} // namespace depot::registry
