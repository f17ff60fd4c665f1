#include "registry/repo/versions.hpp"

#include "common/json.hpp"
#include "registry/repo/events.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/service/content.hpp"
#include "s3/conditions.hpp"

#include <random>

namespace depot::registry {

namespace {

/// [[name, value], ...]: the column format of user metadata and tags (order kept).
template <class Range, class Project>
std::string pairs_json(const Range& items, Project project)
{
    boost::json::array j;
    j.reserve(std::size(items));
    for (const auto& item : items) {
        const auto& [name, value] = project(item);
        j.push_back(boost::json::array{json_string(name), json_string(value)});
    }
    return boost::json::serialize(j);
}

/// The pairs of a [[name, value], ...] column (throws on a malformed one: the column is Depot's own).
std::vector<std::pair<std::string, std::string>> pairs_from_json(std::string_view text)
{
    std::vector<std::pair<std::string, std::string>> out;
    const auto doc = boost::json::parse(text);
    for (const auto& pair : doc.as_array()) {
        const auto& p = pair.as_array();
        out.emplace_back(std::string(p.at(0).as_string()), std::string(p.at(1).as_string()));
    }
    return out;
}

} // namespace

std::string metadata_json(const object_headers& h)
{
    return pairs_json(
        h.user_metadata, [](const auto& p) -> const auto& { return p; });
}

std::vector<std::pair<std::string, std::string>> metadata_from_json(std::string_view text)
{
    return pairs_from_json(text);
}

std::string tags_json(const std::vector<s3::tag>& tags)
{
    return pairs_json(tags, [](const s3::tag& t) {
        return std::pair<const std::string&, const std::string&>(t.key, t.value);
    });
}

std::vector<s3::tag> tags_from_json(std::string_view text)
{
    std::vector<s3::tag> out;
    for (auto& [key, value] : pairs_from_json(text))
        out.push_back(s3::tag{.key = std::move(key), .value = std::move(value)});
    return out;
}

/// Locks the bucket row against deletion for the transaction; false when the bucket is gone.
asio::awaitable<bool> lock_bucket(pg::connection& c, std::int64_t bucket_id)
{
    auto rs = co_await sql(c, "SELECT 1 FROM buckets WHERE id = $1 FOR SHARE", bucket_id);
    co_return !rs.empty();
}

// The bucket's write lock: an advisory lock keyed by two int4s, a class for "bucket writes" and the bucket
// id ($1). Writers hold it shared, snapshots exclusively (lock_bucket_writes).
#define DEPOT_BUCKET_WRITES_LOCK "1146114894, ($1 % 2147483647)::integer"

pg::statement lock_bucket_versioning_statement(std::int64_t bucket_id)
{
    return statement_of("SELECT b.versioning, b.object_events FROM buckets b, "
                        "pg_advisory_xact_lock_shared(" DEPOT_BUCKET_WRITES_LOCK
                        ") l WHERE b.id = $1 FOR SHARE OF b",
                        bucket_id);
}

std::optional<versioning_mode> locked_versioning(const pg::result_set& rs)
{
    if (rs.empty())
        return std::nullopt;
    return versioning_mode_of(rs[0].text(0));
}

bool locked_object_events(const pg::result_set& rs)
{
    return !rs.empty() && rs[0].boolean(1);
}

asio::awaitable<std::optional<versioning_mode>> lock_bucket_versioning(pg::connection& c,
                                                                       std::int64_t bucket_id)
{
    auto st = lock_bucket_versioning_statement(bucket_id);
    auto rs = co_await c.query(st.sql, std::move(st.params));
    co_return locked_versioning(rs);
}

asio::awaitable<bool> lock_bucket_writes(pg::connection& c, std::int64_t bucket_id)
{
    auto rs = co_await sql(
        c, "SELECT 1 FROM buckets b, pg_advisory_xact_lock(" DEPOT_BUCKET_WRITES_LOCK ") l WHERE b.id = $1",
        bucket_id);
    co_return !rs.empty();
}

std::string make_version_id(std::int64_t seq)
{
    thread_local std::mt19937_64 random(std::random_device{}());
    static constexpr char hex[] = "0123456789abcdef";
    std::string id(32, '0');
    auto n = static_cast<std::uint64_t>(seq);
    for (int i = 15; i >= 0; --i, n >>= 4)
        id[static_cast<std::size_t>(i)] = hex[n & 0xf];
    auto r = random();
    for (int i = 31; i >= 16; --i, r >>= 4)
        id[static_cast<std::size_t>(i)] = hex[r & 0xf];
    return id;
}

std::int64_t seq_of_version_id(std::string_view id) noexcept
{
    std::uint64_t n = 0;
    for (char ch : id.substr(0, 16))
        n = (n << 4) | static_cast<std::uint64_t>(ch <= '9' ? ch - '0' : ch - 'a' + 10);
    return static_cast<std::int64_t>(n);
}

pg::statement lock_current_statement(std::int64_t bucket_id, std::string_view key)
{
    // Under READ COMMITTED, a writer that waited for a concurrent writer's lock finds the row it waited for
    // deleted (replaced) and gets nothing, although a newer current row now exists. One statement tells
    // "absent" from "replaced meanwhile": `seen` is the current row in the statement's snapshot, `locked`
    // that row if still current once its lock was granted. Replaced: look again (each statement takes a fresh
    // snapshot). Absent from the snapshot: absent (a writer committing one meanwhile makes our insert fail on
    // the unique index of current rows, and transact() retries).
    return statement_of("WITH seen AS (SELECT id FROM object_versions WHERE bucket_id = $1 AND key = $2 "
                        "AND superseded_seq IS NULL), locked AS (SELECT o.id, o.etag, "
                        "o.is_delete_marker, o.version_id FROM object_versions o, seen "
                        "WHERE o.id = seen.id AND o.superseded_seq IS NULL FOR UPDATE OF o) "
                        "SELECT l.id, l.etag, l.is_delete_marker, l.version_id FROM seen "
                        "LEFT JOIN locked l ON true",
                        bucket_id, key);
}

std::optional<std::optional<current_version>> locked_current(const pg::result_set& rs)
{
    if (rs.empty())
        return std::optional<current_version>();
    if (rs[0].is_null(0))
        return std::nullopt;
    return std::optional<current_version>(
        current_version{rs[0].i64(0), rs[0].str(1), rs[0].boolean(2), rs[0].str(3)});
}

asio::awaitable<std::optional<current_version>> lock_current(pg::connection& c, std::int64_t bucket_id,
                                                             std::string_view key)
{
    for (int attempt = 0; attempt < 8; ++attempt) {
        auto st = lock_current_statement(bucket_id, key);
        auto rs = co_await c.query(st.sql, std::move(st.params));
        if (auto found = locked_current(rs))
            co_return std::move(*found);
    }
    throw pg::error("the current version of a key kept changing", "40001");
}

result<void> check_write_conditions(const std::optional<std::string>& if_match,
                                    const std::optional<std::string>& if_none_match,
                                    const std::optional<current_version>& current)
{
    if (!if_match && !if_none_match)
        return ok();
    std::optional<std::string_view> etag;
    if (current && !current->is_delete_marker)
        etag = current->etag;
    s3::write_conditions conditions;
    if (if_match)
        conditions.if_match = *if_match;
    if (if_none_match)
        conditions.if_none_match = *if_none_match;
    return s3::evaluate_write_conditions(conditions, etag);
}

asio::awaitable<std::int64_t> release_version(pg::connection& c, std::int64_t row,
                                              std::vector<std::string>& unreferenced)
{
    // A snapshot of the bucket that sees this row keeps it: purged (hidden from every live view) and, if it
    // was current, superseded now, so that the snapshot reads it and nothing else does.
    auto kept =
        co_await sql(c,
                     "UPDATE object_versions o SET purged = true, "
                     "superseded_seq = coalesce(o.superseded_seq, nextval('commit_seq')) "
                     "WHERE o.id = $1 AND NOT o.is_delete_marker AND EXISTS (SELECT 1 FROM snapshots s "
                     "WHERE s.bucket_id = o.bucket_id AND s.seq >= o.created_seq AND "
                     "(o.superseded_seq IS NULL OR s.seq < o.superseded_seq) AND "
                     "starts_with(o.key, s.prefix)) RETURNING superseded_seq",
                     row);
    if (!kept.empty())
        co_return kept[0].i64(0);
    auto segs = co_await sql(c,
                             "WITH v AS (DELETE FROM object_versions WHERE id = $1 RETURNING id) "
                             "SELECT blob_id FROM object_segments WHERE version_row = $1",
                             row);
    co_await drop_references(c, first_column(segs), unreferenced);
    co_return 0;
}

asio::awaitable<void> reinstate_version(pg::connection& c, std::int64_t row)
{
    // Snapshots taken since the row was superseded must not start seeing it: they keep a purged copy of its
    // past (with its own blob references), and the row itself becomes current from a new sequence number.
    auto seen = co_await sql(c,
                             "SELECT 1 FROM object_versions o JOIN snapshots s ON s.bucket_id = o.bucket_id "
                             "WHERE o.id = $1 AND s.seq >= o.superseded_seq AND starts_with(o.key, s.prefix) "
                             "LIMIT 1",
                             row);
    if (seen.empty()) {
        co_await sql(c, "UPDATE object_versions SET superseded_seq = NULL WHERE id = $1", row);
        co_return;
    }
    auto copy = co_await sql(
        c,
        "INSERT INTO object_versions (bucket_id, key, version_id, created_seq, superseded_seq, "
        "is_delete_marker, size, etag, sha256, owner_id, last_modified, content_type, content_encoding, "
        "content_disposition, content_language, cache_control, expires, user_metadata, parts_count, "
        "checksum_algorithm, checksum_type, checksum_value, tags, sse, sse_key_check, purged) "
        "SELECT bucket_id, key, version_id, created_seq, superseded_seq, is_delete_marker, size, etag, "
        "sha256, "
        "owner_id, last_modified, content_type, content_encoding, content_disposition, content_language, "
        "cache_control, expires, user_metadata, parts_count, checksum_algorithm, checksum_type, "
        "checksum_value, tags, sse, sse_key_check, true FROM object_versions WHERE id = $1 AND NOT "
        "is_delete_marker RETURNING id",
        row);
    if (!copy.empty()) {
        const std::int64_t past = copy[0].i64(0);
        auto segs = co_await sql(c,
                                 "INSERT INTO object_segments (version_row, ordinal, blob_id, blob_offset, "
                                 "length, part_number) SELECT $2, ordinal, blob_id, blob_offset, length, "
                                 "part_number FROM object_segments WHERE version_row = $1 RETURNING blob_id",
                                 row, past);
        co_await sql(c,
                     "INSERT INTO object_parts (version_row, part_number, offset_in_object, size, checksum) "
                     "SELECT $2, part_number, offset_in_object, size, checksum FROM object_parts "
                     "WHERE version_row = $1",
                     row, past);
        co_await add_references(c, first_column(segs));
    }
    co_await sql(c,
                 "UPDATE object_versions SET superseded_seq = NULL, created_seq = nextval('commit_seq') "
                 "WHERE id = $1",
                 row);
}

asio::awaitable<version_slot> retire_current(pg::connection& c, versioning_mode mode, std::int64_t bucket_id,
                                             std::string_view key,
                                             const std::optional<current_version>& current,
                                             std::vector<std::string>& unreferenced)
{
    version_slot slot;
    if (mode == versioning_mode::unversioned) {
        if (current)
            slot.seq = co_await release_version(c, current->row, unreferenced);
        co_return slot;
    }
    if (mode == versioning_mode::suspended) {
        // The 'null' version is replaced wherever it is; the caller holds the key's current-row lock, which
        // every writer of the key takes, so the history cannot change meanwhile.
        if (current && current->version_id == "null") {
            slot.seq = co_await release_version(c, current->row, unreferenced);
            co_return slot;
        }
        auto nulls = co_await sql(c,
                                  "SELECT id FROM object_versions WHERE bucket_id = $1 AND key = $2 AND "
                                  "version_id = 'null' AND NOT purged FOR UPDATE",
                                  bucket_id, key);
        for (auto r : nulls)
            co_await release_version(c, r.i64(0), unreferenced);
    }
    // One commit sequence number for the change: the replaced version's superseded_seq is the new
    // version's created_seq, so a snapshot at any number sees exactly one of them.
    if (current) {
        auto rs =
            co_await sql(c,
                         "UPDATE object_versions SET superseded_seq = nextval('commit_seq') WHERE id = $1 "
                         "RETURNING superseded_seq",
                         current->row);
        slot.seq = rs[0].i64(0);
    } else if (mode == versioning_mode::enabled) {
        auto rs = co_await sql(c, "SELECT nextval('commit_seq')");
        slot.seq = rs[0].i64(0);
    }
    if (mode == versioning_mode::enabled)
        slot.version_id = make_version_id(slot.seq);
    co_return slot;
}

// The bucket's name where object events are on, else NULL: returned with the version insert, so a bucket
// without events costs no query of its own.
#define DEPOT_BUCKET_NAME_IF_EVENTS "(SELECT name FROM buckets WHERE id = $1 AND object_events)"

namespace {

// The version insert, $1..$26 as version_params() orders them. Object Lock ($22 mode, $23 retain-until in
// ms, $24 legal hold): a version (not a delete marker) that names no retention takes its bucket's default
// retention, if the bucket has Object Lock and one (schema/0024_object_lock.sql). Server-side encryption:
// $25 sse, $26 sse_key_check.
#define DEPOT_VERSION_INSERT                                                                                 \
    "INSERT INTO object_versions (bucket_id, key, version_id, created_seq, size, etag, sha256, owner_id, "   \
    "content_type, content_encoding, content_disposition, content_language, cache_control, expires, "        \
    "user_metadata, parts_count, checksum_algorithm, checksum_type, checksum_value, is_delete_marker, "      \
    "tags, lock_mode, lock_until, legal_hold, sse, sse_key_check) "                                          \
    "SELECT $1, $2, $18, CASE WHEN $19::bigint = 0 THEN nextval('commit_seq') ELSE $19::bigint END, "        \
    "$3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb, $14, nullif($15, ''), nullif($16, ''), "         \
    "nullif($17, ''), $20, $21::jsonb, "                                                                     \
    "CASE WHEN $20 THEN NULL WHEN $22::text <> '' THEN $22::text ELSE d.lock_default_mode END, "             \
    "CASE WHEN $20 THEN NULL WHEN $22::text <> '' THEN to_timestamp($23::double precision / 1000) "          \
    "WHEN d.lock_default_mode IS NOT NULL THEN now() + make_interval(years => "                              \
    "coalesce(d.lock_default_years, 0), days => coalesce(d.lock_default_days, 0)) END, "                     \
    "CASE WHEN $20 THEN NULL ELSE $24::boolean END, nullif($25, ''), $26 "                                   \
    "FROM (SELECT 1) one LEFT JOIN buckets d ON d.id = $1 AND d.object_lock"

std::vector<pg::param> version_params(const object_version& v, std::int64_t seq)
{
    const auto& h = v.headers;
    std::vector<pg::param> p;
    p.reserve(26);
    p.emplace_back(v.bucket_id);
    p.emplace_back(v.key);
    p.emplace_back(v.size);
    p.emplace_back(v.etag);
    p.push_back(v.sha256.empty() ? pg::param(std::nullopt) : pg::param(pg::bytes(v.sha256)));
    p.emplace_back(v.owner_id);
    p.emplace_back(h.content_type);
    p.emplace_back(h.content_encoding);
    p.emplace_back(h.content_disposition);
    p.emplace_back(h.content_language);
    p.emplace_back(h.cache_control);
    p.emplace_back(h.expires);
    p.emplace_back(metadata_json(h));
    p.push_back(v.parts_count ? pg::param(*v.parts_count) : pg::param(std::nullopt));
    p.emplace_back(v.checksum_algorithm);
    p.emplace_back(v.checksum_type);
    p.emplace_back(v.checksum_value);
    p.emplace_back(v.version_id);
    p.emplace_back(seq);
    p.emplace_back(v.is_delete_marker);
    p.emplace_back(tags_json(v.tags));
    p.emplace_back(v.retention ? std::string(s3::to_string(v.retention->mode)) : std::string());
    p.emplace_back(v.retention ? to_millis(v.retention->retain_until) : std::int64_t{0});
    p.emplace_back(v.legal_hold);
    p.emplace_back(v.sse);
    p.push_back(v.sse_key_check.empty() ? pg::param(std::nullopt) : pg::param(pg::bytes(v.sse_key_check)));
    return p;
}

} // namespace

/// Inserts a version row; returns (row id, last_modified ms).
asio::awaitable<std::pair<std::int64_t, std::int64_t>>
insert_version(pg::connection& c, const object_version& v, std::int64_t seq)
{
    auto params = version_params(v, seq);
    auto rs = co_await c.query(DEPOT_VERSION_INSERT
                               " RETURNING id, " DEPOT_MS("last_modified") ", " DEPOT_BUCKET_NAME_IF_EVENTS,
                               std::move(params));
    const std::string_view type = v.is_delete_marker ? "object.deleted" : "object.created";
    if (!rs[0].is_null(2))
        co_await events::emit_object_event(c, rs[0].text(2), type, v.bucket_id, v.key, v.version_id, v.size,
                                           v.etag, v.owner_id);
    co_return std::pair{rs[0].i64(0), rs[0].i64(1)};
}

pg::statement insert_version_statement(const object_version& v, std::int64_t seq,
                                       const std::vector<segment>& segments)
{
    // One statement for the row and its manifest: the segments need the row's id, which a separate
    // statement would have to wait for.
    pg::statement st{"WITH v AS (" DEPOT_VERSION_INSERT " RETURNING id, last_modified), "
                     "s AS (INSERT INTO object_segments (version_row, ordinal, blob_id, blob_offset, length, "
                     "part_number) SELECT v.id, s.ord - 1, s.blob, s.off, s.len, nullif(s.part, 0)::int "
                     "FROM v, unnest($27::bigint[], $28::bigint[], $29::bigint[], $30::bigint[]) "
                     "WITH ORDINALITY AS s(blob, off, len, part, ord)) "
                     "SELECT id, " DEPOT_MS("last_modified") " FROM v",
                     version_params(v, seq)};
    for (auto& array : segment_arrays(segments))
        st.params.emplace_back(std::move(array));
    return st;
}

} // namespace depot::registry
