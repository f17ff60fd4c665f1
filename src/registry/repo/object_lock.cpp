// Object Lock: a version's retention and legal hold are columns of its row (schema/0024_object_lock.sql).
// Changing them touches nothing else: no new version, no commit sequence number, no content.
#include "registry/repo/object_lock.hpp"

#include "registry/repo/audit.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/service/object_service.hpp"
#include "registry/transaction.hpp"

namespace depot::registry {
namespace {

struct lock_state
{
    std::optional<s3::retention_mode> mode;
    std::int64_t until_ms = 0;
    bool in_force = false; ///< the retain-until date is still ahead (database clock)
    bool legal_hold = false;
};

/// The lock of a live version row, locked FOR UPDATE; nullopt when the row is gone, purged or a marker.
asio::awaitable<std::optional<lock_state>> lock_row(pg::connection& c, std::int64_t row)
{
    auto rs =
        co_await sql(c,
                     "SELECT coalesce(lock_mode, ''), coalesce(" DEPOT_MS(
                         "lock_until") ", 0), coalesce(lock_until > now(), false), "
                                       "coalesce(legal_hold, false) FROM object_versions "
                                       "WHERE id = $1 AND NOT purged AND NOT is_delete_marker FOR UPDATE",
                     row);
    if (rs.empty())
        co_return std::nullopt;
    co_return lock_state{.mode = s3::parse_retention_mode(rs[0].text(0)),
                         .until_ms = rs[0].i64(1),
                         .in_force = rs[0].boolean(2),
                         .legal_hold = rs[0].boolean(3)};
}

error locked(std::string_view why)
{
    return make_error(errc::access_denied,
                      "Access Denied because object protected by object lock: " + std::string(why));
}

asio::awaitable<void> allow_bypass(pg::connection& c)
{
    co_await sql(c, "SELECT set_config('depot.bypass_governance', 'on', true)");
}

} // namespace

asio::awaitable<result<bool>> check_removable(pg::connection& c, std::int64_t row, bool bypass_governance)
{
    auto state = co_await lock_row(c, row);
    if (!state)
        co_return false; // a delete marker (never locked), or nothing to protect
    if (state->legal_hold)
        co_return locked("the version is under legal hold");
    if (!state->mode || !state->in_force)
        co_return false;
    if (*state->mode == s3::retention_mode::compliance)
        co_return locked("COMPLIANCE retention has not passed");
    if (!bypass_governance)
        co_return locked("GOVERNANCE retention has not passed (x-amz-bypass-governance-retention)");
    co_await allow_bypass(c);
    co_return true;
}

asio::awaitable<result<void>> object_service::set_retention(const audit_context& who,
                                                            const object_version& version,
                                                            std::optional<s3::retention> wanted,
                                                            bool bypass_governance)
{
    const std::string mode = wanted ? std::string(s3::to_string(wanted->mode)) : std::string();
    const std::int64_t until = wanted ? to_millis(wanted->retain_until) : 0;
    co_return co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
        auto state = co_await lock_row(c, version.row_id);
        if (!state)
            co_return make_error(errc::no_such_version, "The specified version does not exist.");
        bool bypassed = false;
        if (state->mode && state->in_force) {
            const bool weaker = !wanted || wanted->mode != *state->mode || until < state->until_ms;
            if (weaker) {
                if (*state->mode == s3::retention_mode::compliance)
                    co_return locked("COMPLIANCE retention can only be extended");
                if (!bypass_governance)
                    co_return locked("shortening or removing GOVERNANCE retention needs "
                                     "x-amz-bypass-governance-retention");
                co_await allow_bypass(c);
                bypassed = true;
            }
        }
        co_await sql(c,
                     "UPDATE object_versions SET lock_mode = nullif($2, ''), lock_until = CASE WHEN $2 = '' "
                     "THEN NULL ELSE to_timestamp($3::double precision / 1000) END WHERE id = $1",
                     version.row_id, mode, until);
        std::string details = "{\"version_id\":" + audit_quote(version.version_id) +
                              ",\"mode\":" + (wanted ? audit_quote(mode) : std::string("null"));
        if (wanted)
            details += ",\"retain_until\":" + std::to_string(until);
        if (bypassed)
            details += ",\"bypass_governance\":true";
        details += "}";
        co_await append_object_audit(c, who, "object.retention", version.bucket_id, version.key,
                                     std::move(details));
        co_return ok();
    });
}

asio::awaitable<result<void>> object_service::set_legal_hold(const audit_context& who,
                                                             const object_version& version, bool on)
{
    co_return co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
        auto rs = co_await sql(c,
                               "UPDATE object_versions SET legal_hold = $2 WHERE id = $1 AND NOT purged AND "
                               "NOT is_delete_marker RETURNING id",
                               version.row_id, on);
        if (rs.empty())
            co_return make_error(errc::no_such_version, "The specified version does not exist.");
        co_await append_object_audit(c, who, "object.legal_hold", version.bucket_id, version.key,
                                     "{\"version_id\":" + audit_quote(version.version_id) +
                                         ",\"legal_hold\":" + (on ? "true" : "false") + "}");
        co_return ok();
    });
}

} // namespace depot::registry
