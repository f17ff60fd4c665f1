#include "registry/repo/bucket_repository.hpp"

#include "auth/bucket_policy.hpp"
#include "common/log.hpp"
#include "registry/repo/audit.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/repo/versions.hpp"
#include "registry/service/lookup_cache.hpp"
#include "registry/transaction.hpp"

namespace depot::registry {
namespace {

constexpr const char* bucket_columns =
    "b.id, b.name, b.owner_id, u.display_name, b.region, b.versioning, " DEPOT_MS(
        "b.created_at") ", b.dedup, b.object_events, EXISTS (SELECT 1 FROM models m WHERE m.bucket_id = "
                        "b.id), coalesce(b.cors, ''), b.tags::text, b.object_lock, "
                        "coalesce(b.lock_default_mode, ''), coalesce(b.lock_default_days, 0), "
                        "coalesce(b.lock_default_years, 0), "
                        "coalesce(b.acl, ''), coalesce(b.public_access_block, ''), "
                        "coalesce(b.object_ownership, ''), coalesce(b.encryption, ''), "
                        "coalesce(b.policy, '')";

std::optional<s3::default_retention> lock_default_from(const pg::row& r)
{
    auto mode = s3::parse_retention_mode(r.text(13));
    if (!mode)
        return std::nullopt;
    return s3::default_retention{
        .mode = *mode, .days = static_cast<int>(r.i64(14)), .years = static_cast<int>(r.i64(15))};
}

/// The parsed form of a stored policy; one that no longer parses denies everything (fails closed).
std::shared_ptr<const auth::bucket_policy> policy_from(std::string_view stored, std::string_view name)
{
    if (stored.empty())
        return nullptr;
    auto parsed = auth::parse_bucket_policy(stored, name);
    if (parsed)
        return std::make_shared<const auth::bucket_policy>(std::move(*parsed));
    log::error("a stored bucket policy does not parse: it denies everything",
               {{"bucket", std::string(name)}, {"error", parsed.error().message}});
    auth::policy_statement deny_all{.allow = false,
                                    .any_principal = true,
                                    .actions = {"*"},
                                    .resources = {std::string(name), std::string(name) + "/*"}};
    return std::make_shared<const auth::bucket_policy>(
        auth::bucket_policy{.statements = {std::move(deny_all)}});
}

bucket bucket_from(const pg::row& r)
{
    auto policy = r.str(20);
    auto parsed = policy_from(policy, r.text(1));
    return bucket{.id = r.i64(0),
                  .name = r.str(1),
                  .owner_id = r.str(2),
                  .owner_display_name = r.str(3),
                  .region = r.str(4),
                  .versioning = r.str(5),
                  .created_at = from_millis(r.i64(6)),
                  .dedup = r.boolean(7),
                  .object_events = r.boolean(8),
                  .has_models = r.boolean(9),
                  .cors = r.str(10),
                  .tags = r.is_null(11) ? std::nullopt : std::optional(tags_from_json(r.text(11))),
                  .object_lock = r.boolean(12),
                  .lock_default = lock_default_from(r),
                  .acl = r.str(16),
                  .public_access_block = r.str(17),
                  .object_ownership = r.str(18),
                  .encryption = r.str(19),
                  .policy = std::move(policy),
                  .parsed_policy = std::move(parsed)};
}

} // namespace

asio::awaitable<result<bucket>> bucket_repository::create(const audit_context& who, std::string_view name,
                                                          std::string_view owner_id, std::string_view region,
                                                          bool object_lock)
{
    auto conn = co_await pool_.acquire();
    co_await conn->execute("BEGIN");
    try {
        // Object Lock comes with versioning Enabled (and keeps it so).
        auto rs = co_await sql(
            *conn,
            std::string("WITH b AS (INSERT INTO buckets (name, owner_id, region, object_lock, versioning) "
                        "VALUES ($1, $2, $3, $4, CASE WHEN $4 THEN 'enabled' ELSE 'unversioned' END) "
                        "RETURNING *) SELECT ") +
                bucket_columns + " FROM b JOIN users u ON u.id = b.owner_id",
            name, owner_id, region, object_lock);
        co_await append_audit(*conn, who, "bucket.create", name, "",
                              "{\"region\":" + audit_quote(region) +
                                  (object_lock ? ",\"object_lock\":true}" : "}"));
        co_await conn->execute("COMMIT");
        co_return bucket_from(rs[0]);
    } catch (const pg::error& e) {
        if (!e.is_unique_violation())
            throw;
    }
    co_await conn->execute("ROLLBACK");
    auto rs = co_await sql(*conn, "SELECT owner_id FROM buckets WHERE name = $1", name);
    if (!rs.empty() && rs[0].text(0) == owner_id)
        co_return make_error(
            errc::bucket_already_owned_by_you,
            "Your previous request to create the named bucket succeeded and you already own it.");
    co_return make_error(
        errc::bucket_already_exists,
        "The requested bucket name is not available. Please select a different name and try again.");
}

void bucket_repository::forget(std::string_view name)
{
    if (cache_)
        cache_->forget_bucket(name);
}

asio::awaitable<result<bucket>> bucket_repository::get(std::string_view name)
{
    std::uint64_t ticket = 0;
    if (cache_) {
        if (auto hit = cache_->find_bucket(name))
            co_return std::move(*hit);
        ticket = cache_->ticket();
    }
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn,
                           std::string("SELECT ") + bucket_columns +
                               " FROM buckets b JOIN users u ON u.id = b.owner_id WHERE b.name = $1",
                           name);
    if (rs.empty())
        co_return make_error(errc::no_such_bucket, "The specified bucket does not exist");
    auto b = bucket_from(rs[0]);
    if (cache_)
        cache_->store_bucket(ticket, b);
    co_return b;
}

asio::awaitable<result<bucket>> bucket_repository::set_access(const audit_context& who, std::string_view name,
                                                              access_setting what,
                                                              std::optional<std::string> value)
{
    std::string_view column = "acl";
    std::string_view action = "bucket.acl";
    std::string audit;
    switch (what) {
    case access_setting::acl:
        audit = "{\"acl\":" + (value ? audit_quote(*value) : std::string("null")) + "}";
        break;
    case access_setting::public_access_block:
        column = "public_access_block";
        action = "bucket.public_access_block";
        audit = "{\"public_access_block\":" + (value ? audit_quote(*value) : std::string("null")) + "}";
        break;
    case access_setting::object_ownership:
        column = "object_ownership";
        action = "bucket.ownership_controls";
        audit = "{\"object_ownership\":" + (value ? audit_quote(*value) : std::string("null")) + "}";
        break;
    }
    co_return co_await set_setting(who, name, column, std::move(value), audit, action);
}

asio::awaitable<result<bucket>> bucket_repository::set_setting(const audit_context& who,
                                                               std::string_view name, std::string_view column,
                                                               pg::param value, std::string_view audit_json,
                                                               std::string_view action)
{
    auto changed = co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<bucket>> {
        auto rs = co_await sql(c,
                               "WITH b AS (UPDATE buckets SET " + std::string(column) +
                                   " = $2 WHERE name = $1 RETURNING *) SELECT " + bucket_columns +
                                   " FROM b JOIN users u ON u.id = b.owner_id",
                               name, value);
        if (rs.empty())
            co_return make_error(errc::no_such_bucket, "The specified bucket does not exist");
        co_await append_audit(c, who, action, name, "", std::string(audit_json));
        co_return bucket_from(rs[0]);
    });
    if (changed)
        forget(name);
    co_return changed;
}

asio::awaitable<result<bucket>>
bucket_repository::set_object_lock(const audit_context& who, std::string_view name,
                                   const std::optional<s3::default_retention>& rule)
{
    std::optional<std::string> mode;
    std::optional<std::int64_t> days;
    std::optional<std::int64_t> years;
    std::string audit = R"({"object_lock":true)";
    if (rule) {
        mode = std::string(s3::to_string(rule->mode));
        if (rule->days > 0)
            days = rule->days;
        else
            years = rule->years;
        audit += ",\"mode\":" + audit_quote(*mode) +
                 (days ? ",\"days\":" + std::to_string(*days) : ",\"years\":" + std::to_string(*years));
    }
    audit += "}";
    auto changed = co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<bucket>> {
        auto state = co_await sql(c, "SELECT versioning FROM buckets WHERE name = $1 FOR UPDATE", name);
        if (state.empty())
            co_return make_error(errc::no_such_bucket, "The specified bucket does not exist");
        if (state[0].text(0) != "enabled")
            co_return make_error(errc::invalid_bucket_state,
                                 "Versioning must be 'Enabled' on the bucket to apply a Object Lock "
                                 "configuration");
        auto rs = co_await sql(c,
                               std::string("WITH b AS (UPDATE buckets SET object_lock = true, "
                                           "lock_default_mode = $2, lock_default_days = $3, "
                                           "lock_default_years = $4 WHERE name = $1 RETURNING *) SELECT ") +
                                   bucket_columns + " FROM b JOIN users u ON u.id = b.owner_id",
                               name, mode, days, years);
        co_await append_audit(c, who, "bucket.object_lock", name, "", audit);
        co_return bucket_from(rs[0]);
    });
    if (changed)
        forget(name);
    co_return changed;
}

asio::awaitable<result<bucket>> bucket_repository::set_policy(const audit_context& who, std::string_view name,
                                                              std::optional<std::string> policy)
{
    const std::string audit =
        policy ? "{\"policy\":" + audit_quote(*policy) + "}" : std::string(R"({"policy":null})");
    co_return co_await set_setting(who, name, "policy", std::move(policy), audit, "bucket.policy");
}

asio::awaitable<result<bucket>> bucket_repository::set_dedup(const audit_context& who, std::string_view name,
                                                             bool dedup)
{
    co_return co_await set_setting(who, name, "dedup", dedup,
                                   dedup ? R"({"dedup":true})" : R"({"dedup":false})");
}

asio::awaitable<result<bucket>> bucket_repository::set_object_events(const audit_context& who,
                                                                     std::string_view name, bool enabled)
{
    co_return co_await set_setting(who, name, "object_events", enabled,
                                   enabled ? R"({"object_events":true})" : R"({"object_events":false})");
}

asio::awaitable<result<bucket>> bucket_repository::set_cors(const audit_context& who, std::string_view name,
                                                            std::optional<std::string> cors)
{
    const bool set = cors.has_value();
    co_return co_await set_setting(who, name, "cors", std::move(cors),
                                   set ? R"({"cors":true})" : R"({"cors":false})");
}

asio::awaitable<result<bucket>> bucket_repository::set_encryption(const audit_context& who,
                                                                  std::string_view name,
                                                                  std::optional<std::string> algorithm)
{
    const std::string audit = algorithm ? "{\"encryption\":" + audit_quote(*algorithm) + "}"
                                        : std::string(R"({"encryption":null})");
    co_return co_await set_setting(who, name, "encryption", std::move(algorithm), audit);
}

asio::awaitable<result<bucket>> bucket_repository::set_tags(const audit_context& who, std::string_view name,
                                                            std::optional<std::vector<s3::tag>> tags)
{
    std::optional<std::string> stored;
    if (tags)
        stored = tags_json(*tags);
    const std::string audit =
        tags ? "{\"tags\":" + std::to_string(tags->size()) + "}" : std::string(R"({"tags":null})");
    co_return co_await set_setting(who, name, "tags", std::move(stored), audit);
}

asio::awaitable<std::vector<bucket>> bucket_repository::list_owned(std::string_view owner_id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn,
                           std::string("SELECT ") + bucket_columns +
                               " FROM buckets b JOIN users u ON u.id = b.owner_id WHERE b.owner_id = $1 "
                               "ORDER BY b.name",
                           owner_id);
    std::vector<bucket> out;
    for (auto r : rs)
        out.push_back(bucket_from(r));
    co_return out;
}

asio::awaitable<result<void>> bucket_repository::remove(const audit_context& who, std::string_view name)
{
    auto conn = co_await pool_.acquire();
    // One statement: the emptiness check and the delete see the same snapshot, and the row lock taken by
    // DELETE makes a concurrent PutObject (which reads the bucket FOR SHARE) wait or fail cleanly.
    pg::result_set rs;
    bool failed = false;
    co_await conn->execute("BEGIN");
    try {
        rs = co_await sql(*conn,
                          "WITH target AS (SELECT id FROM buckets WHERE name = $1 FOR UPDATE), "
                          "busy AS (SELECT 1 FROM object_versions o, target t WHERE o.bucket_id = t.id "
                          "AND NOT o.purged LIMIT 1), "
                          "del AS (DELETE FROM buckets b USING target t WHERE b.id = t.id "
                          "AND NOT EXISTS (SELECT 1 FROM busy) RETURNING b.id) "
                          "SELECT (SELECT count(*) FROM target), (SELECT count(*) FROM del)",
                          name);
    } catch (const pg::error& e) {
        // multipart_uploads, models or snapshots still reference the bucket (rows kept only for snapshots
        // do not make it "not empty").
        if (e.sqlstate() != "23503")
            throw;
        failed = true;
    }
    if (failed || rs[0].i64(1) == 0) {
        co_await conn->execute("ROLLBACK");
        if (failed)
            co_return make_error(
                errc::conflict,
                "The bucket has multipart uploads in progress, models bound to it or snapshots");
        if (rs[0].i64(0) == 0)
            co_return make_error(errc::no_such_bucket, "The specified bucket does not exist");
        co_return make_error(errc::bucket_not_empty, "The bucket you tried to delete is not empty");
    }
    co_await append_audit(*conn, who, "bucket.delete", name);
    co_await conn->execute("COMMIT");
    forget(name);
    co_return ok();
}

asio::awaitable<bucket_repository::stored_totals> bucket_repository::totals()
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await conn->query("SELECT (SELECT coalesce(sum(size), 0) FROM object_versions"
                                   "        WHERE superseded_seq IS NULL AND NOT is_delete_marker),"
                                   "       (SELECT coalesce(sum(size), 0) FROM blobs)");
    co_return stored_totals{.logical = rs[0].i64(0), .physical = rs[0].i64(1)};
}

} // namespace depot::registry
