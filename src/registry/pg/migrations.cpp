/// \file
/// The migrations runner. One run holds a session-level advisory lock from start to end, so several depotd
/// processes starting together apply each migration once: the first applies, the others wait and then find
/// nothing left to do. Each migration runs in its own transaction together with the insert of its row in
/// schema_migrations, so a failed migration leaves no trace and the next run retries it.

#include "registry/pg/migrations.hpp"

#include "common/hash.hpp"
#include "common/log.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <exception>
#include <map>

namespace depot::pg {
namespace {

/// Advisory lock key of the migrations runner: the bytes of "depotmig".
constexpr std::int64_t lock_key = 0x6465706f746d6967;

struct applied_row
{
    std::string name;
    std::string checksum;
};

std::string checksum(const migration_source& m)
{
    return to_hex(sha256(m.sql));
}

/// Checks that `list` is in strictly increasing version order; returns the newest version (0 if empty).
int validate(const std::vector<migration_source>& list)
{
    int previous = 0;
    for (const auto& m : list) {
        int v = migration_version(m.name);
        if (v <= previous)
            throw std::invalid_argument("migration " + m.name +
                                        " is out of order or reuses a version (versions must increase)");
        previous = v;
    }
    return previous;
}

asio::awaitable<std::map<int, applied_row>> read_applied(connection& conn)
{
    std::map<int, applied_row> applied;
    auto rows = co_await conn.query("SELECT version, name, checksum FROM schema_migrations ORDER BY version");
    for (auto r : rows)
        applied.emplace(static_cast<int>(r.i64(0)), applied_row{r.str(1), r.str(2)});
    co_return applied;
}

/// Compares what the database has applied with `list`; throws if they disagree in a way that applying
/// the missing migrations cannot fix.
void verify(const std::map<int, applied_row>& applied, const std::vector<migration_source>& list, int latest)
{
    for (const auto& [version, row] : applied) {
        if (version > latest)
            throw error("the database schema is at version " + std::to_string(version) + " (" + row.name +
                            "), newer than this binary knows (latest " + std::to_string(latest) +
                            "); upgrade depotd",
                        "");
        auto it = std::find_if(list.begin(), list.end(),
                               [&](const auto& m) { return migration_version(m.name) == version; });
        if (it == list.end())
            throw error("applied migration " + row.name + " is missing from this binary", "");
        if (row.checksum != checksum(*it))
            throw error("migration " + it->name +
                            " was changed after it was applied (checksum mismatch); released migrations must "
                            "never be edited: add a new one instead",
                        "");
    }
    int newest_applied = applied.empty() ? 0 : applied.rbegin()->first;
    for (const auto& m : list) {
        int v = migration_version(m.name);
        if (v < newest_applied && !applied.contains(v))
            throw error("migration " + m.name + " is not applied but a later one (version " +
                            std::to_string(newest_applied) + ") is; migrations must be added in order",
                        "");
    }
}

asio::awaitable<void> apply(connection& conn, const migration_source& m)
{
    auto started = std::chrono::steady_clock::now();
    try {
        co_await conn.execute("BEGIN");
        co_await conn.execute(m.sql);
        std::vector<param> row{param(std::int32_t{migration_version(m.name)}), param(m.name),
                               param(checksum(m))};
        co_await conn.query("INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                            std::move(row));
        co_await conn.execute("COMMIT");
    } catch (const error& e) {
        throw error("migration " + m.name + " failed: " + e.what(), e.sqlstate());
    }
    auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    log::info("applied migration", {{"migration", m.name},
                                    {"version", migration_version(m.name)},
                                    {"ms", static_cast<long long>(ms.count())}});
}

asio::awaitable<migration_status> run_locked(connection& conn, const std::vector<migration_source>& list,
                                             int latest)
{
    co_await conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations ("
                          " version integer PRIMARY KEY,"
                          " name text NOT NULL,"
                          " checksum text NOT NULL,"
                          " applied_at timestamptz NOT NULL DEFAULT now())");
    auto applied = co_await read_applied(conn);
    verify(applied, list, latest);
    int current = applied.empty() ? 0 : applied.rbegin()->first;
    for (const auto& m : list) {
        int v = migration_version(m.name);
        if (applied.contains(v))
            continue;
        co_await apply(conn, m);
        current = v;
    }
    co_return migration_status{.current = current, .latest = latest};
}

} // namespace

int migration_version(std::string_view name)
{
    int v = 0;
    auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), v);
    if (ec != std::errc() || end == name.data() || v <= 0)
        throw std::invalid_argument("migration file name must start with a positive version number: " +
                                    std::string(name));
    return v;
}

asio::awaitable<migration_status> migrate(connection& conn)
{
    return migrate(conn, embedded_migrations());
}

asio::awaitable<migration_status> migrate(connection& conn, const std::vector<migration_source>& list)
{
    int latest = validate(list);
    if (conn.in_transaction())
        throw std::logic_error("pg::migrate needs a connection outside any transaction");
    std::vector<param> key{param(lock_key)};
    co_await conn.query("SELECT pg_advisory_lock($1)", std::move(key));

    std::exception_ptr failure;
    migration_status status;
    try {
        status = co_await run_locked(conn, list, latest);
    } catch (...) {
        failure = std::current_exception();
    }
    // The lock is per session: release it whatever happened (a lost connection released it already).
    if (conn.healthy()) {
        try {
            if (conn.in_transaction())
                co_await conn.execute("ROLLBACK");
            std::vector<param> unlock{param(lock_key)};
            co_await conn.query("SELECT pg_advisory_unlock($1)", std::move(unlock));
        } catch (const std::exception& e) {
            log::warn("could not release the migrations lock", {{"error", e.what()}});
            if (!failure)
                throw;
        }
    }
    if (failure)
        std::rethrow_exception(failure);
    co_return status;
}

asio::awaitable<migration_status> migration_state(connection& conn)
{
    return migration_state(conn, embedded_migrations());
}

asio::awaitable<migration_status> migration_state(connection& conn, const std::vector<migration_source>& list)
{
    migration_status status{.current = 0, .latest = validate(list)};
    auto exists = co_await conn.query("SELECT to_regclass('schema_migrations') IS NOT NULL");
    if (exists[0].boolean(0)) {
        auto rows = co_await conn.query("SELECT coalesce(max(version), 0) FROM schema_migrations");
        status.current = static_cast<int>(rows[0].i64(0));
    }
    co_return status;
}

} // namespace depot::pg
