#pragma once
/// \file
/// Forward-only numbered migrations (schema/NNNN_name.sql), embedded in the binary at build time.

#include "registry/pg/pg.hpp"

#include <string>
#include <vector>

namespace depot::pg {

struct migration_source {
    std::string name; ///< file name, e.g. "0001_init.sql"; the leading number is the version
    std::string sql;
};

/// All migrations compiled into this binary, in version order.
const std::vector<migration_source>& embedded_migrations();

struct migration_status {
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

} // namespace depot::pg
