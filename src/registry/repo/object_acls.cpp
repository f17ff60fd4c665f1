#include "registry/repo/object_acls.hpp"

#include "registry/repo/audit.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/transaction.hpp"

namespace depot::registry {

boost::asio::awaitable<std::string> object_acl(pg::pool& pool, std::int64_t version_row)
{
    auto conn = co_await pool.acquire();
    auto rs = co_await sql(*conn, "SELECT acl FROM object_acls WHERE version_row = $1", version_row);
    co_return rs.empty() ? std::string() : rs[0].str(0);
}

boost::asio::awaitable<void> insert_version_acl(pg::connection& c, std::int64_t version_row,
                                                std::string_view acl)
{
    co_await sql(c, "INSERT INTO object_acls (version_row, acl) VALUES ($1, $2)", version_row, acl);
}

boost::asio::awaitable<result<void>> set_object_acl(pg::pool& pool, const audit_context& who,
                                                    const object_version& version, std::string stored)
{
    const std::string details = "{\"version_id\":" + audit_quote(version.version_id) +
                                ",\"acl\":" + (stored.empty() ? std::string("null") : audit_quote(stored)) +
                                "}";
    co_return co_await transact(pool, [&](pg::connection& c) -> boost::asio::awaitable<result<void>> {
        // Purged rows are only a snapshot's past; a delete marker has no ACL.
        auto rs = co_await sql(c,
                               "SELECT id FROM object_versions WHERE id = $1 AND NOT purged AND "
                               "NOT is_delete_marker FOR UPDATE",
                               version.row_id);
        if (rs.empty())
            co_return make_error(errc::no_such_version, "The specified version does not exist.");
        if (stored.empty())
            co_await sql(c, "DELETE FROM object_acls WHERE version_row = $1", version.row_id);
        else
            co_await sql(c,
                         "INSERT INTO object_acls (version_row, acl) VALUES ($1, $2) "
                         "ON CONFLICT (version_row) DO UPDATE SET acl = EXCLUDED.acl",
                         version.row_id, stored);
        co_await append_object_audit(c, who, "object.acl", version.bucket_id, version.key, details);
        co_return ok();
    });
}

} // namespace depot::registry
