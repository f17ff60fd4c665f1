#include "audit_commands.hpp"

#include "common/json.hpp"
#include "registry/service/audit.hpp"
#include "registry/service/audit_archive.hpp"

#include <fstream>
#include <iostream>

namespace depot::ctl {
namespace {

namespace asio = boost::asio;

/// The archive's own audit row names depotctl as the actor.
const registry::audit_context depotctl_audit{
    .actor = "depotctl", .credential = {}, .request_id = {}, .client_addr = {}};

registry::audit_query query_of(const cli& c)
{
    registry::audit_query q;
    q.since = c.get("--since");
    q.until = c.get("--until");
    q.actor = c.get("--actor");
    q.team = c.get("--team");
    q.action = c.get("--action");
    q.resource = c.get("--resource");
    q.viewer_is_admin = true;
    q.limit = 1000;
    return q;
}

/// Calls `line` with each row (a JSON object) the query selects, up to `through_id`, in chain order.
asio::awaitable<void> each_row(pg::pool& pool, registry::audit_query q, std::int64_t through_id,
                               const std::function<void(const std::string&)>& line)
{
    for (;;) {
        auto rows = co_await registry::audit_log::list(pool, q);
        if (!rows)
            throw failure(rows.error().message, 2);
        for (const auto& r : *rows) {
            auto id = boost::json::parse(r).at("id").to_number<std::int64_t>();
            if (id > through_id)
                co_return;
            line(r);
            q.after_id = id;
        }
        if (rows->size() < q.limit)
            co_return;
    }
}

void report(const registry::audit_verification& v, bool json)
{
    if (json) {
        boost::json::object out{
            {"rows", v.rows}, {"unsealed", v.unsealed}, {"anchor_id", v.anchor_id}, {"ok", !v.bad_row}};
        if (v.bad_row) {
            out["bad_row"] = *v.bad_row;
            out["problem"] = v.problem;
        }
        std::cout << boost::json::serialize(out) << "\n";
    } else if (!v.bad_row) {
        std::cout << "audit log verified: " << v.rows << " rows"
                  << (v.anchor_id ? ", chained to archived row " + std::to_string(v.anchor_id)
                                  : std::string())
                  << (v.unsealed ? ", " + std::to_string(v.unsealed) + " newer rows not sealed yet"
                                 : std::string())
                  << "\n";
    }
}

} // namespace

asio::awaitable<void> run_audit(const cli& c, std::shared_ptr<pg::pool> pool,
                                std::function<std::shared_ptr<storage::blob_store>()> store_of)
{
    const auto& p = c.positional;
    const bool json = c.has("--json");
    if (p.size() < 2)
        throw failure("audit needs verify, export or archive", 2);
    if (p[1] == "verify") {
        // Seal what has committed first (what depotd does continuously), so the check covers every row
        // written so far, also when no depotd runs.
        co_await registry::audit_log::seal(*pool);
        auto v = co_await registry::audit_log::verify(*pool);
        report(v, json);
        if (v.bad_row)
            throw failure(
                "audit log verification FAILED at row " + std::to_string(*v.bad_row) + ": " + v.problem, 1);
        co_return;
    }
    if (p[1] == "export") {
        // Rows committed so far get their hashes first, so an export carries the chain (as verify does).
        co_await registry::audit_log::seal(*pool);
        std::ofstream file;
        if (c.has("--output")) {
            file.open(c.get("--output"), std::ios::trunc);
            if (!file)
                throw failure("cannot write " + c.get("--output"));
        }
        std::ostream& out = c.has("--output") ? static_cast<std::ostream&>(file) : std::cout;
        const std::function<void(const std::string&)> sink = [&](const std::string& r) { out << r << "\n"; };
        co_await each_row(*pool, query_of(c), INT64_MAX, sink);
        out.flush();
        if (!out)
            throw failure("cannot write the export");
        co_return;
    }
    if (p[1] == "archive") {
        if (!c.has("--before") || !c.has("--bucket"))
            throw failure("audit archive needs --before TIME and --bucket BUCKET", 2);
        registry::audit_archive_request req;
        req.before = c.get("--before");
        req.bucket = c.get("--bucket");
        req.key_prefix = c.get("--key-prefix", "audit/");
        auto store = store_of();
        auto done = co_await registry::archive_audit_rows(depotctl_audit, *pool, *store, req);
        if (!done) {
            const auto code = done.error().code;
            const bool usage = code == errc::invalid_argument || code == errc::no_such_bucket;
            throw failure(done.error().message, usage ? 2 : 1);
        }
        if (done->busy)
            throw failure("another audit archive is running (depotd's retention or depotctl); try again", 1);
        if (json)
            std::cout << boost::json::serialize(boost::json::object{{"archived", done->archived},
                                                                    {"first_row", done->first_row},
                                                                    {"last_row", done->last_row},
                                                                    {"bucket", done->bucket},
                                                                    {"key", done->key}})
                      << "\n";
        else if (done->archived == 0)
            std::cout << "nothing to archive\n";
        else
            std::cout << "archived " << done->archived << " rows (" << done->first_row << "-"
                      << done->last_row << ") to s3://" << done->bucket << "/" << done->key << "\n";
        co_return;
    }
    throw failure("unknown command 'audit " + p[1] + "'", 2);
}

} // namespace depot::ctl
