// The SQL of model versions (registry/repo/model_versions.hpp).
#include "registry/repo/model_versions.hpp"

#include "registry/repo/model_detail.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/service/sse.hpp"

namespace depot::registry {
using namespace model_detail;

namespace {

/// path, size, sha256, etag, content_type starting at column `col`.
model_file file_of(const pg::row& r, int col = 0)
{
    return model_file{.path = r.str(col),
                      .size = static_cast<std::uint64_t>(r.i64(col + 1)),
                      .sha256 = r.opt_bytea(col + 2).value_or(""),
                      .etag = r.str(col + 3),
                      .content_type = r.opt_str(col + 4)};
}

/// The segments of one file of a version ($1 version id, $2 path), in order, for segments_of.
constexpr const char* file_segments_sql =
    "SELECT s.blob_id, b.store_id, s.blob_offset, s.length, coalesce(b.sealed, '') FROM model_file_segments "
    "s "
    "JOIN blobs b ON b.id = s.blob_id WHERE s.version_id = $1 AND s.path = $2 ORDER BY s.ordinal";

std::vector<segment> segments_of(const pg::result_set& rs)
{
    std::vector<segment> out;
    for (auto r : rs)
        out.push_back(segment{.blob_row = r.i64(0),
                              .store_id = r.str(1),
                              .offset = static_cast<std::uint64_t>(r.i64(2)),
                              .length = static_cast<std::uint64_t>(r.i64(3)),
                              .sealed = sealing_from_column(r.str(4))});
    return out;
}

std::optional<model_version> first_version(const pg::result_set& rs)
{
    if (rs.empty())
        return std::nullopt;
    return version_of(rs[0]);
}

} // namespace

// --- digests of files not hashed yet --------------------------------------------------------------------

namespace {

/// The object rows freeze_prefix copies, `o`: parameters $<n> bucket, $<n+1> prefix, $<n+2> upper,
/// $<n+3> as_of_seq when set. Directory markers (the prefix itself, empty keys ending in '/') are not files.
std::string visible_rows(const freeze_source& source, int n = 2)
{
    const auto p = [n](int i) { return "$" + std::to_string(n + i); };
    return "FROM object_versions o WHERE o.bucket_id = " + p(0) + " AND o.key > " + p(1) + " AND (" + p(2) +
           " = '' OR o.key < " + p(2) +
           ") AND NOT o.is_delete_marker AND NOT (o.size = 0 AND o.key LIKE '%/') AND " +
           (source.as_of_seq ? "o.created_seq <= " + p(3) +
                                   " AND (o.superseded_seq IS NULL OR o.superseded_seq > " + p(3) + ") "
                             : std::string("o.superseded_seq IS NULL "));
}

} // namespace

asio::awaitable<std::vector<std::int64_t>> rows_without_sha256(pg::connection& c, const freeze_source& source)
{
    const std::string q = "SELECT o.id " + visible_rows(source, 1) + "AND o.sha256 IS NULL ORDER BY o.key";
    if (source.as_of_seq)
        co_return first_column(
            co_await sql(c, q, source.bucket_id, source.prefix, source.upper, *source.as_of_seq));
    co_return first_column(co_await sql(c, q, source.bucket_id, source.prefix, source.upper));
}

asio::awaitable<std::vector<segment>> object_row_segments(pg::connection& c, std::int64_t version_row)
{
    auto segs = co_await sql(c,
                             "SELECT s.blob_id, b.store_id, s.blob_offset, s.length, coalesce(b.sealed, '') "
                             "FROM object_segments s "
                             "JOIN blobs b ON b.id = s.blob_id WHERE s.version_row = $1 ORDER BY s.ordinal",
                             version_row);
    co_return segments_of(segs);
}

asio::awaitable<void> set_object_sha256(pg::connection& c, std::int64_t id, const pg::bytes& sha256)
{
    co_await sql(c, "UPDATE object_versions SET sha256 = $2 WHERE id = $1 AND sha256 IS NULL", id, sha256);
}

asio::awaitable<std::vector<std::string>> version_paths_without_sha256(pg::connection& c,
                                                                       std::int64_t version_id)
{
    auto rows =
        co_await sql(c, "SELECT path FROM model_files WHERE version_id = $1 AND sha256 IS NULL", version_id);
    std::vector<std::string> out;
    out.reserve(rows.size());
    for (auto row : rows)
        out.push_back(row.str(0));
    co_return out;
}

asio::awaitable<std::vector<segment>> version_file_segments(pg::connection& c, std::int64_t version_id,
                                                            std::string_view path)
{
    auto segs = co_await sql(c, file_segments_sql, version_id, path);
    co_return segments_of(segs);
}

asio::awaitable<void> set_version_file_sha256(pg::connection& c, std::int64_t version_id,
                                              std::string_view path, const pg::bytes& sha256)
{
    co_await sql(c, "UPDATE model_files SET sha256 = $3 WHERE version_id = $1 AND path = $2", version_id,
                 path, sha256);
}

namespace {

/// The first column of the first row, if there is one.
std::optional<std::string> first_text(const pg::result_set& rs)
{
    if (rs.empty())
        return std::nullopt;
    return rs[0].str(0);
}

} // namespace

asio::awaitable<std::optional<std::string>> unsafe_file_path(pg::connection& c, std::int64_t version_id)
{
    auto rs = co_await sql(c,
                           // Segments split at '/' or '\\': one of dots and spaces only (empty included:
                           // '//', a leading or trailing '/'), or ending in a dot or a space (Windows drops
                           // them: '.. ' is '..' there, 'w.bin.' is 'w.bin'); a device name (CON, NUL, COM1,
                           // aux.txt: a device, not a file, on Windows). A drive letter ('C:/x', 'C:x'). A
                           // control character.
                           "SELECT path FROM model_files WHERE version_id = $1 AND (path ~ "
                           "'(^|[/\\\\])[. ]*([/\\\\]|$)' OR path ~ '[. ]([/\\\\]|$)' OR path ~* "
                           "'(^|[/\\\\])(con|prn|aux|nul|com[0-9]|lpt[0-9])(\\.[^/\\\\]*)?([/\\\\]|$)' OR "
                           "path ~ '^[A-Za-z]:' OR path ~ '[[:cntrl:]]') ORDER BY path LIMIT 1",
                           version_id);
    co_return first_text(rs);
}

asio::awaitable<std::optional<std::string>> orphaned_binding_owner(pg::connection& c, std::int64_t model_id)
{
    auto rs =
        co_await sql(c,
                     "SELECT b.owner_id FROM models m JOIN buckets b ON b.id = m.bucket_id JOIN users u ON "
                     "u.id = m.created_by WHERE m.id = $1 AND NOT u.is_admin AND NOT (m.created_by = "
                     "b.owner_id AND EXISTS (SELECT 1 FROM team_members t WHERE t.team_id = m.team_id AND "
                     "t.user_id = b.owner_id))",
                     model_id);
    co_return first_text(rs);
}

asio::awaitable<std::optional<std::string>> customer_sealed_file(pg::connection& c, std::int64_t version_id)
{
    auto rs = co_await sql(c,
                           "SELECT s.path FROM model_file_segments s JOIN blobs b ON b.id = s.blob_id WHERE "
                           "s.version_id = $1 AND b.sealed = 'customer' ORDER BY s.path LIMIT 1",
                           version_id);
    co_return first_text(rs);
}

// --- creating a version ----------------------------------------------------------------------------------

asio::awaitable<std::optional<std::int64_t>> lock_next_version(pg::connection& c, std::int64_t model_id)
{
    auto locked = co_await sql(c, "SELECT next_version FROM models WHERE id = $1 FOR UPDATE", model_id);
    if (locked.empty())
        co_return std::nullopt;
    co_return locked[0].i64(0);
}

asio::awaitable<bool> label_taken(pg::connection& c, std::int64_t model_id, std::string_view label)
{
    auto taken = co_await sql(c,
                              "SELECT 1 FROM model_versions WHERE model_id = $1 AND label = $2 UNION ALL "
                              "SELECT 1 FROM model_aliases WHERE model_id = $1 AND name = $2",
                              model_id, label);
    co_return !taken.empty();
}

asio::awaitable<std::int64_t> insert_version(pg::connection& c, std::int64_t model_id, std::int64_t number,
                                             const version_spec& spec, std::string_view created_by)
{
    auto inserted =
        co_await sql(c,
                     "INSERT INTO model_versions (model_id, number, label, description, framework, "
                     "format, parent, run_url, labels, metrics, created_by) VALUES ($1, $2, $3, "
                     "$4, $5, $6, $7, $8, $9::jsonb, $10::jsonb, $11) RETURNING id",
                     model_id, number, spec.label, spec.description, spec.framework, spec.format, spec.parent,
                     spec.run_url, spec.labels_json, spec.metrics_json, created_by);
    co_return inserted[0].i64(0);
}

asio::awaitable<void> freeze_prefix(pg::connection& c, std::int64_t version_id, const freeze_source& source)
{
    // The object rows visible now (or at the snapshot's sequence number $5).
    const std::string visible = visible_rows(source);
    const std::string files_sql = "INSERT INTO model_files (version_id, path, size, sha256, etag, "
                                  "content_type) SELECT $1, substr(o.key, char_length($3) + 1), o.size, "
                                  "o.sha256, o.etag, o.content_type " +
                                  visible;
    const std::string segments_sql =
        "INSERT INTO model_file_segments (version_id, path, ordinal, blob_id, blob_offset, length) "
        "SELECT "
        "$1, substr(o.key, char_length($3) + 1), s.ordinal, s.blob_id, s.blob_offset, s.length FROM "
        "object_segments s JOIN (SELECT o.id, o.key " +
        visible + ") o ON o.id = s.version_row";
    // Who wrote the files: the four-eyes rule all_contributors keeps them from approving the version.
    const std::string contributors_sql =
        "UPDATE model_versions SET contributors = coalesce((SELECT array_agg(DISTINCT o.owner_id ORDER BY "
        "o.owner_id) " +
        visible + "), '{}') WHERE id = $1";
    for (const auto* q : {&files_sql, &segments_sql, &contributors_sql}) {
        if (source.as_of_seq)
            co_await sql(c, *q, version_id, source.bucket_id, source.prefix, source.upper, *source.as_of_seq);
        else
            co_await sql(c, *q, version_id, source.bucket_id, source.prefix, source.upper);
    }
    co_await sql(c,
                 "UPDATE blobs b SET refcount = b.refcount + n.k FROM (SELECT blob_id, count(*) AS k FROM "
                 "model_file_segments WHERE version_id = $1 GROUP BY blob_id) n WHERE b.id = n.blob_id",
                 version_id);
    co_await sql(
        c,
        "UPDATE model_versions SET (file_count, total_bytes) = (SELECT count(*), coalesce(sum(size), "
        "0) FROM model_files WHERE version_id = $1) WHERE id = $1",
        version_id);
}

asio::awaitable<void> advance_next_version(pg::connection& c, std::int64_t model_id)
{
    co_await sql(c, "UPDATE models SET next_version = next_version + 1 WHERE id = $1", model_id);
}

// --- reading versions ------------------------------------------------------------------------------------

asio::awaitable<model_version> read_version(pg::connection& c, std::int64_t id)
{
    auto rs = co_await sql(c, std::string(version_select) + "WHERE v.id = $1", id);
    co_return version_of(rs[0]);
}

asio::awaitable<std::vector<model_version>> versions_before(pg::connection& c, std::int64_t model_id,
                                                            int before, std::int64_t limit)
{
    auto rs = co_await sql(
        c,
        std::string(version_select) +
            "WHERE v.model_id = $1 AND ($2 = 0 OR v.number < $2) ORDER BY v.number DESC LIMIT $3",
        model_id, before, limit);
    std::vector<model_version> out;
    for (auto r : rs)
        out.push_back(version_of(r));
    co_return out;
}

asio::awaitable<std::optional<model_version>> version_by_number(pg::connection& c, std::int64_t model_id,
                                                                std::int64_t number)
{
    auto rs = co_await sql(c, std::string(version_select) + "WHERE v.model_id = $1 AND v.number = $2",
                           model_id, number);
    co_return first_version(rs);
}

asio::awaitable<std::optional<model_version>> version_by_label(pg::connection& c, std::int64_t model_id,
                                                               std::string_view label)
{
    auto rs = co_await sql(c, std::string(version_select) + "WHERE v.model_id = $1 AND v.label = $2",
                           model_id, label);
    co_return first_version(rs);
}

asio::awaitable<std::optional<model_version>> version_by_alias(pg::connection& c, std::int64_t model_id,
                                                               std::string_view alias)
{
    auto rs = co_await sql(c,
                           std::string(version_select) +
                               "JOIN model_aliases al ON al.version_id = v.id WHERE al.model_id = $1 AND "
                               "al.name = $2 AND v.state <> 'archived'",
                           model_id, alias);
    co_return first_version(rs);
}

asio::awaitable<std::optional<model_version>> version_by_alias_id(pg::connection& c, std::int64_t model_id,
                                                                  std::int64_t alias_id)
{
    auto rs = co_await sql(c,
                           std::string(version_select) +
                               "JOIN model_aliases al ON al.version_id = v.id WHERE al.model_id = $1 AND "
                               "al.id = $2 AND v.state <> 'archived'",
                           model_id, alias_id);
    co_return first_version(rs);
}

asio::awaitable<std::vector<model_file>> version_files(pg::connection& c, std::int64_t version_id,
                                                       std::string_view after, std::int64_t limit,
                                                       bool inclusive)
{
    auto rs = co_await sql(c,
                           std::string("SELECT path, size, sha256, etag, content_type FROM model_files WHERE "
                                       "version_id = $1 AND ") +
                               (inclusive ? "path >= $2" : "path > $2") + " ORDER BY path LIMIT $3",
                           version_id, after, limit);
    std::vector<model_file> out;
    for (auto r : rs)
        out.push_back(file_of(r));
    co_return out;
}

asio::awaitable<file_diff> version_diff(pg::connection& c, std::int64_t from_version, std::int64_t to_version)
{
    auto rs =
        co_await sql(c,
                     "SELECT a.path, a.size, a.sha256, a.etag, a.content_type, b.path, b.size, b.sha256, "
                     "b.etag, b.content_type FROM (SELECT * FROM model_files WHERE version_id = $1) a "
                     "FULL JOIN (SELECT * FROM model_files WHERE version_id = $2) b ON a.path = b.path "
                     "WHERE a.path IS NULL OR b.path IS NULL OR a.sha256 IS DISTINCT FROM b.sha256 OR "
                     "a.size <> b.size ORDER BY coalesce(a.path, b.path)",
                     from_version, to_version);
    file_diff out;
    for (auto r : rs) {
        if (r.is_null(0))
            out.added.push_back(file_of(r, 5));
        else if (r.is_null(5))
            out.removed.push_back(file_of(r, 0));
        else
            out.changed.emplace_back(file_of(r, 0), file_of(r, 5));
    }
    co_return out;
}

asio::awaitable<std::optional<model_file>> version_file(pg::connection& c, std::int64_t version_id,
                                                        std::string_view path)
{
    auto rs =
        co_await sql(c,
                     "SELECT path, size, sha256, etag, content_type FROM model_files WHERE version_id = $1 "
                     "AND path = $2",
                     version_id, path);
    if (rs.empty())
        co_return std::nullopt;
    co_return file_of(rs[0]);
}

} // namespace depot::registry
