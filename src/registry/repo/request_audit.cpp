#include "registry/repo/request_audit.hpp"

#include "registry/repo/sql_util.hpp"

#include <string>

namespace depot::registry {

asio::awaitable<void> audit_denial(pg::pool& pool, const audit_context& who, const denial& d)
{
    std::string details = "{\"reason\":" + audit_quote(d.reason);
    if (!d.bucket.empty())
        details += ",\"bucket\":" + audit_quote(d.bucket);
    if (!d.copy_source.empty())
        details += ",\"copy_source\":" + audit_quote(d.copy_source);
    details += "}";
    auto conn = co_await pool.acquire();
    std::string whose = d.team;
    if (whose.empty() && !d.bucket.empty() && !d.key.empty()) {
        // A key of a bucket: the row is the team's whose model holds the key (the longest prefix), so that
        // its admins read attempts at the model's files in the bucket as they read those through the view.
        auto rs = co_await sql(
            *conn,
            "SELECT t.name, m.name FROM models m JOIN teams t ON t.id = m.team_id JOIN buckets b "
            "ON b.id = m.bucket_id WHERE b.name = $1 AND starts_with($2, m.prefix) ORDER BY "
            "length(m.prefix) DESC LIMIT 1",
            d.bucket, d.key);
        if (!rs.empty()) {
            whose = std::string(rs[0].text(0));
            details.pop_back();
            details += ",\"model\":" + audit_quote(whose + "/" + std::string(rs[0].text(1))) + "}";
        }
    }
    co_await append_audit(*conn, who, d.action, d.resource, whose, details, audit_denied);
}

asio::awaitable<void> audit_model_download(pg::pool& pool, const audit_context& who,
                                           std::string_view resource, std::string_view team,
                                           std::string details_json)
{
    auto conn = co_await pool.acquire();
    co_await append_audit(*conn, who, "model.download", resource, team, std::move(details_json),
                          audit_allowed);
}

asio::awaitable<void> audit_bucket_download(pg::pool& pool, const audit_context& who,
                                            std::string_view resource, std::string_view bucket,
                                            std::string_view key)
{
    auto conn = co_await pool.acquire();
    co_await sql(
        *conn,
        "SELECT audit_append($1, $2, x.team, 'model.download', $3, 'allowed', $4, $5, "
        "jsonb_build_object('via', 'bucket', 'model', x.team || '/' || x.model)) FROM (SELECT t.name AS "
        "team, "
        "m.name AS model FROM models m JOIN teams t ON t.id = m.team_id JOIN buckets b ON b.id = m.bucket_id "
        "WHERE b.name = $6 AND starts_with($7, m.prefix) ORDER BY length(m.prefix) DESC LIMIT 1) x",
        who.actor, who.credential, resource, who.request_id, who.client_addr, bucket, key);
}

} // namespace depot::registry
