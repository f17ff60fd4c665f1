// The SQL of audit retention (registry/repo/audit_retention.hpp).
#include "registry/repo/audit_retention.hpp"

#include "registry/repo/sql_util.hpp"

namespace depot::registry {

boost::asio::awaitable<bool> try_transaction_lock(pg::connection& c, std::int64_t key)
{
    auto held = co_await sql(c, "SELECT pg_try_advisory_xact_lock($1)", key);
    co_return held[0].boolean(0);
}

boost::asio::awaitable<std::int64_t> delete_archived_audit_rows(pg::connection& c, std::int64_t last_row)
{
    auto removed = co_await sql(c, "SELECT audit_archive($1)", last_row);
    co_return removed[0].i64(0);
}

} // namespace depot::registry
