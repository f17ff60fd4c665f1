#pragma once
/// \file
/// Forward-only numbered migrations (schema/NNNN_name.sql), embedded in the binary at build time.

#include "registry/pg/pg.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace depot::pg {

struct migration_source
{
    std::string name; ///< file name, e.g. "0001_init.sql"; the leading number is the version
    std::string sql;
};

/// All migrations compiled into this binary, in version order.
const std::vector<migration_source>& embedded_migrations();

struct migration_status
{
    int current = 0; ///< highest applied version
    int latest = 0;  ///< highest embedded version
};

/// Applies every embedded migration not yet applied, each in its own transaction, serialized across
/// processes with an advisory lock; records them in `schema_migrations` with a checksum. Throws if an
/// applied migration's checksum differs from the embedded one (someone edited a released migration) or if the
/// database is newer than this binary. Returns the resulting status.
asio::awaitable<migration_status> migrate(connection& conn);

/// Reads the status without changing anything.
asio::awaitable<migration_status> migration_state(connection& conn);

/// The version of a migration: the leading number of its file name ("0007_x.sql" -> 7). Throws
/// std::invalid_argument when the name does not start with a positive number.
int migration_version(std::string_view name);

/// migrate() over an explicit list (tests, tools) instead of the embedded one. `list` must be in strictly
/// increasing version order (std::invalid_argument otherwise) and must outlive the returned awaitable. Also
/// throws if a migration that is not applied is older than one that is (migrations are added in order).
/// `conn` must not be inside a transaction; on return the advisory lock is released, also on failure. A
/// failed migration throws pg::error naming its file, keeping the SQLSTATE; it leaves no trace.
asio::awaitable<migration_status> migrate(connection& conn, const std::vector<migration_source>& list);

/// migration_state() over an explicit list; `list` must outlive the returned awaitable.
asio::awaitable<migration_status> migration_state(connection& conn,
                                                  const std::vector<migration_source>& list);

} // namespace depot::pg
