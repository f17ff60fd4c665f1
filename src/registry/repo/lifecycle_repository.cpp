#include "registry/repo/lifecycle_repository.hpp"

#include "registry/repo/audit.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/repo/versions.hpp"
#include "registry/transaction.hpp"
#include "s3/lifecycle.hpp"

#include <limits>

namespace depot::registry {

namespace {

/// The installation-wide lifecycle lock ("depotlcy"), held with pg_try_advisory_xact_lock for a pass: with
/// several depotd processes one executes the rules at a time, so no removal is attempted (and audited) twice.
constexpr std::int64_t lifecycle_lock_key = 0x6465706f746c6379;

/// Rows one query takes; a pass continues after the last one until nothing is left.
constexpr std::int64_t page_size = 500;

/// The size bounds of a filter as SQL arguments: size > $gt AND size < $lt.
std::int64_t greater_than(const s3::lifecycle_filter& f)
{
    return f.size_greater_than ? static_cast<std::int64_t>(*f.size_greater_than) : -1;
}

std::int64_t less_than(const s3::lifecycle_filter& f)
{
    return f.size_less_than ? static_cast<std::int64_t>(*f.size_less_than)
                            : std::numeric_limits<std::int64_t>::max();
}

/// The filter's tags as SQL's argument: a JSON array of [key, value] pairs, like object_versions.tags.
std::string tags_argument(const s3::lifecycle_filter& f)
{
    return tags_json(f.tags);
}

} // namespace

/// SQL: the tag set `column` holds every tag of the JSON array $n, each [key, value] equal to one of its own.
/// Not jsonb containment: `@>` ignores the order inside a pair, so '[["v","k"]]' @> '[["k","v"]]' holds.
#define DEPOT_HAS_TAGS(n, column)                                                                            \
    "NOT EXISTS (SELECT 1 FROM jsonb_array_elements(" n "::jsonb) AS wanted(tag) WHERE NOT EXISTS "          \
    "(SELECT 1 FROM jsonb_array_elements(" column ") AS has(tag) WHERE has.tag = wanted.tag))"

asio::awaitable<std::optional<std::string>> lifecycle_repository::configuration(std::int64_t bucket_id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn, "SELECT lifecycle FROM buckets WHERE id = $1 AND lifecycle IS NOT NULL",
                           bucket_id);
    if (rs.empty())
        co_return std::nullopt;
    co_return rs[0].str(0);
}

asio::awaitable<result<void>> lifecycle_repository::set_configuration(const audit_context& who,
                                                                      std::string_view bucket,
                                                                      std::optional<std::string> xml)
{
    co_return co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
        auto rs =
            co_await sql(c, "UPDATE buckets SET lifecycle = $2 WHERE name = $1 RETURNING id", bucket, xml);
        if (rs.empty())
            co_return make_error(errc::no_such_bucket, "The specified bucket does not exist");
        co_await append_audit(c, who, "bucket.update", bucket, "",
                              std::string("{\"lifecycle\":") + (xml ? "true" : "false") + "}");
        co_return ok();
    });
}

asio::awaitable<std::vector<lifecycle_bucket>> lifecycle_repository::configured_buckets()
{
    std::vector<lifecycle_bucket> buckets;
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn, "SELECT id, name, lifecycle FROM buckets WHERE lifecycle IS NOT NULL "
                                  "ORDER BY id");
    for (auto r : rs)
        buckets.push_back({.id = r.i64(0), .name = r.str(1), .configuration = r.str(2)});
    co_return buckets;
}

asio::awaitable<bool> lifecycle_repository::exclusively(const std::function<asio::awaitable<void>()>& body)
{
    // The lock lives in this connection's transaction: released at its COMMIT, or when the pool rolls back
    // a connection given back mid-transaction (an exception in `body`).
    auto lock = co_await pool_.acquire();
    co_await lock->execute("BEGIN");
    auto held = co_await sql(*lock, "SELECT pg_try_advisory_xact_lock($1)", lifecycle_lock_key);
    if (!held[0].boolean(0)) {
        co_await lock->execute("ROLLBACK");
        co_return false;
    }
    co_await body();
    co_await lock->execute("COMMIT");
    co_return true;
}

asio::awaitable<void> lifecycle_repository::paginate(const pg::statement& statement, const visitor& visit)
{
    std::string after_key;
    std::int64_t after_id = 0;
    for (;;) {
        pg::result_set rs;
        {
            std::vector<pg::param> params;
            params.reserve(3 + statement.params.size());
            params.emplace_back(after_key);
            params.emplace_back(after_id);
            params.emplace_back(page_size);
            params.insert(params.end(), statement.params.begin(), statement.params.end());
            auto conn = co_await pool_.acquire();
            rs = co_await conn->query(statement.sql, std::move(params));
        }
        for (auto r : rs) {
            lifecycle_candidate row{.key = r.str(0),
                                    .row_id = r.i64(1),
                                    .version_id = r.str(2),
                                    .etag = r.str(3),
                                    .last_modified = from_millis(r.i64(4))};
            after_key = row.key;
            after_id = row.row_id;
            co_await visit(row);
        }
        if (static_cast<std::int64_t>(rs.size()) < page_size)
            co_return;
    }
}

asio::awaitable<void> lifecycle_repository::each_due_upload(const lifecycle_selection& s,
                                                            const visitor& visit)
{
    static constexpr std::string_view statement =
        "SELECT key, id, upload_id, '', 0 FROM multipart_uploads WHERE bucket_id = $4 "
        "AND starts_with(key, $5) AND key >= $1 AND (key > $1 OR id > $2) "
        "AND initiated_at <= to_timestamp($6::double precision / 1000) ORDER BY key, id LIMIT $3";
    const auto query = statement_of(statement, s.bucket_id, s.filter.prefix, to_millis(s.cutoff));
    co_await paginate(query, visit);
}

asio::awaitable<void> lifecycle_repository::each_due_current_version(const lifecycle_selection& s,
                                                                     const visitor& visit)
{
    static constexpr std::string_view statement =
        "SELECT o.key, o.id, o.version_id, o.etag, (extract(epoch from o.last_modified) * 1000)::bigint "
        "FROM object_versions o WHERE o.bucket_id = $4 AND o.superseded_seq IS NULL "
        "AND NOT o.is_delete_marker AND NOT o.purged AND starts_with(o.key, $5) AND o.key >= $1 "
        "AND (o.key > $1 OR o.id > $2) AND o.last_modified <= to_timestamp($6::double precision / 1000) "
        "AND o.size > $7 AND o.size < $8 "
        "AND " DEPOT_HAS_TAGS("$9", "o.tags") " ORDER BY o.key, o.id LIMIT $3";
    const auto query = statement_of(statement, s.bucket_id, s.filter.prefix, to_millis(s.cutoff),
                                    greater_than(s.filter), less_than(s.filter), tags_argument(s.filter));
    co_await paginate(query, visit);
}

asio::awaitable<void> lifecycle_repository::each_due_lone_delete_marker(const lifecycle_selection& s,
                                                                        const visitor& visit)
{
    static constexpr std::string_view statement =
        "SELECT o.key, o.id, o.version_id, '', 0 FROM object_versions o WHERE o.bucket_id = $4 "
        "AND o.superseded_seq IS NULL AND o.is_delete_marker AND NOT o.purged "
        "AND starts_with(o.key, $5) AND o.key >= $1 AND (o.key > $1 OR o.id > $2) "
        "AND o.last_modified <= to_timestamp($6::double precision / 1000) "
        "AND NOT EXISTS (SELECT 1 FROM object_versions p WHERE p.bucket_id = o.bucket_id "
        "AND p.key = o.key AND p.id <> o.id AND NOT p.purged) ORDER BY o.key, o.id LIMIT $3";
    const auto query = statement_of(statement, s.bucket_id, s.filter.prefix, to_millis(s.cutoff));
    co_await paginate(query, visit);
}

asio::awaitable<void> lifecycle_repository::each_due_noncurrent_version(const lifecycle_selection& s,
                                                                        int newer, const visitor& visit)
{
    // A version's noncurrent time is its successor's write: the previous row of the window (newest first).
    // The window sees every version of the keys from the cursor on; the cursor applies after it.
    static constexpr std::string_view statement =
        "SELECT key, id, version_id, '', 0 FROM ("
        "SELECT o.key, o.id, o.version_id, o.size, o.tags, o.superseded_seq, "
        "row_number() OVER w AS position, lag(o.last_modified) OVER w AS noncurrent_since "
        "FROM object_versions o WHERE o.bucket_id = $4 AND NOT o.purged "
        "AND starts_with(o.key, $5) AND o.key >= $1 "
        "WINDOW w AS (PARTITION BY o.key ORDER BY o.created_seq DESC)) v "
        "WHERE superseded_seq IS NOT NULL AND position > 1 + $9 "
        "AND noncurrent_since <= to_timestamp($6::double precision / 1000) AND size > $7 AND size < $8 "
        "AND (key > $1 OR id > $2) AND " DEPOT_HAS_TAGS("$10", "v.tags") " ORDER BY key, id LIMIT $3";
    const auto query =
        statement_of(statement, s.bucket_id, s.filter.prefix, to_millis(s.cutoff), greater_than(s.filter),
                     less_than(s.filter), static_cast<std::int64_t>(newer), tags_argument(s.filter));
    co_await paginate(query, visit);
}

} // namespace depot::registry
