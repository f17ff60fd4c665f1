#include "audit_commands.hpp"

#include "registry/audit.hpp"
#include "registry/bucket_repository.hpp"
#include "registry/object_service.hpp"

#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

namespace depot::ctl {
namespace {

namespace asio = boost::asio;

/// The archive document as the body of a PutObject.
class string_source final : public registry::byte_source
{
public:
    explicit string_source(const std::string& data) : data_(data) {}
    asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override
    {
        const std::size_t n = std::min(buf.size(), data_.size() - offset_);
        std::memcpy(buf.data(), data_.data() + offset_, n);
        offset_ += n;
        co_return n;
    }

private:
    const std::string& data_;
    std::size_t offset_ = 0;
};

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
        auto rows = co_await registry::list_audit(pool, q);
        if (!rows)
            throw failure(rows.error().message, 2);
        for (const auto& r : *rows) {
            auto id = nlohmann::json::parse(r).at("id").get<std::int64_t>();
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
        nlohmann::json out{
            {"rows", v.rows}, {"unsealed", v.unsealed}, {"anchor_id", v.anchor_id}, {"ok", !v.bad_row}};
        if (v.bad_row) {
            out["bad_row"] = *v.bad_row;
            out["problem"] = v.problem;
        }
        std::cout << out.dump() << "\n";
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
        co_await registry::seal_audit(*pool);
        auto v = co_await registry::verify_audit(*pool);
        report(v, json);
        if (v.bad_row)
            throw failure(
                "audit log verification FAILED at row " + std::to_string(*v.bad_row) + ": " + v.problem, 1);
        co_return;
    }
    if (p[1] == "export") {
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
        auto through = co_await registry::last_audit_row_before(*pool, c.get("--before"));
        if (!through)
            throw failure(through.error().message, 2);
        if (!*through) {
            std::cout << (json ? "{\"archived\":0}" : "nothing to archive") << "\n";
            co_return;
        }
        // Only an intact chain is archived: what leaves the database must verify too.
        auto v = co_await registry::verify_audit(*pool);
        if (v.bad_row)
            throw failure("audit log verification FAILED at row " + std::to_string(*v.bad_row) + ": " +
                              v.problem + "; nothing archived",
                          1);
        std::string document;
        std::int64_t first = 0;
        registry::audit_query all;
        all.viewer_is_admin = true;
        all.limit = 1000;
        const std::function<void(const std::string&)> collect = [&](const std::string& r) {
            if (!first)
                first = nlohmann::json::parse(r).at("id").get<std::int64_t>();
            document += r;
            document += '\n';
        };
        co_await each_row(*pool, all, **through, collect);
        registry::bucket_repository buckets(*pool);
        auto bucket = co_await buckets.get(c.get("--bucket"));
        if (!bucket)
            throw failure("no bucket " + c.get("--bucket"), 2);
        const std::string key = c.get("--key-prefix", "audit/") + "audit-" + std::to_string(first) + "-" +
                                std::to_string(**through) + ".jsonl";
        auto store = store_of();
        registry::object_service objects(*pool, *store);
        string_source body(document);
        registry::put_object_request put;
        put.target = &*bucket;
        put.key = key;
        put.owner_id = bucket->owner_id;
        put.headers.content_type = "application/x-ndjson";
        put.content_length = document.size();
        put.body = &body;
        auto stored = co_await objects.put_object(std::move(put));
        if (!stored)
            throw failure("cannot write s3://" + bucket->name + "/" + key + ": " + stored.error().message);
        // The rows leave the database only once their copy is stored.
        auto removed = co_await registry::archive_audit(*pool, **through);
        if (json)
            std::cout << nlohmann::json{{"archived", removed},
                                        {"first_row", first},
                                        {"last_row", **through},
                                        {"bucket", bucket->name},
                                        {"key", key}}
                             .dump()
                      << "\n";
        else
            std::cout << "archived " << removed << " rows (" << first << "-" << **through << ") to s3://"
                      << bucket->name << "/" << key << "\n";
        co_return;
    }
    throw failure("unknown command 'audit " + p[1] + "'", 2);
}

} // namespace depot::ctl
