// The SQL of models (registry/repo/models.hpp).
#include "registry/repo/models.hpp"

#include "registry/repo/model_detail.hpp"
#include "registry/repo/sql_util.hpp"

namespace depot::registry {
using namespace model_detail;

namespace {

/// The approver role of an override as stored; nullopt keeps the team's.
std::optional<std::string> role_column(const policy_override& p)
{
    if (!p.approver_role)
        return std::nullopt;
    return std::string(to_string(*p.approver_role));
}

/// The four-eyes rule of an override; nullopt keeps the team's.
std::optional<std::string> four_eyes_column(const policy_override& p)
{
    if (!p.four_eyes)
        return std::nullopt;
    return std::string(to_string(*p.four_eyes));
}

/// The protected aliases of an override as a text[] literal; nullopt keeps the team's.
std::optional<std::string> aliases_column(const policy_override& p)
{
    if (!p.protected_aliases)
        return std::nullopt;
    return text_array(*p.protected_aliases);
}

} // namespace

asio::awaitable<std::optional<std::int64_t>> insert_model(pg::connection& c, std::int64_t team_id,
                                                          const model_spec& spec, std::string_view created_by)
{
    const auto role = role_column(spec.policy);
    const auto aliases = aliases_column(spec.policy);
    auto rs = co_await sql(c,
                           "INSERT INTO models (team_id, name, bucket_id, prefix, description, "
                           "required_approvals, approver_role, protected_aliases, created_by, four_eyes) "
                           "VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text[], $9, $10) "
                           "ON CONFLICT (team_id, name) DO NOTHING RETURNING id",
                           team_id, spec.name, spec.bucket_id, spec.prefix, spec.description,
                           spec.policy.required_approvals, role, aliases, created_by,
                           four_eyes_column(spec.policy));
    if (rs.empty())
        co_return std::nullopt;
    co_return rs[0].i64(0);
}

asio::awaitable<bool> overlaps_another_teams_model(pg::connection& c, std::int64_t bucket_id,
                                                   std::string_view prefix, std::int64_t team_id)
{
    // The lock's class is "model prefixes" ("dmpx"), its second key the bucket id.
    co_await sql(c, "SELECT pg_advisory_xact_lock(1684893816, ($1 % 2147483647)::integer)", bucket_id);
    auto rs = co_await sql(c,
                           "SELECT 1 FROM models WHERE bucket_id = $1 AND team_id <> $3 AND "
                           "(starts_with(prefix, $2) OR starts_with($2, prefix)) LIMIT 1",
                           bucket_id, prefix, team_id);
    co_return !rs.empty();
}

asio::awaitable<model> read_model(pg::connection& c, std::int64_t id)
{
    auto rows = co_await sql(c, std::string(model_select) + "WHERE m.id = $1", id);
    co_return model_of(rows[0]);
}

asio::awaitable<std::vector<model>> models_after(pg::connection& c, std::int64_t team_id,
                                                 std::string_view after, std::int64_t limit)
{
    auto rs = co_await sql(
        c, std::string(model_select) + "WHERE m.team_id = $1 AND m.name > $2 ORDER BY m.name LIMIT $3",
        team_id, after, limit);
    std::vector<model> out;
    for (auto r : rs)
        out.push_back(model_of(r));
    co_return out;
}

asio::awaitable<std::optional<model>> find_model(pg::connection& c, std::int64_t team_id,
                                                 std::string_view name)
{
    auto rs =
        co_await sql(c, std::string(model_select) + "WHERE m.team_id = $1 AND m.name = $2", team_id, name);
    if (rs.empty())
        co_return std::nullopt;
    co_return model_of(rs[0]);
}

asio::awaitable<std::optional<std::int64_t>> lock_model_revision(pg::connection& c, std::int64_t id)
{
    auto cur = co_await sql(c, "SELECT revision FROM models WHERE id = $1 FOR UPDATE", id);
    if (cur.empty())
        co_return std::nullopt;
    co_return cur[0].i64(0);
}

asio::awaitable<void> update_model_row(pg::connection& c, std::int64_t id, const model_update& update)
{
    const auto role = role_column(update.policy);
    const auto aliases = aliases_column(update.policy);
    co_await sql(c,
                 "UPDATE models SET description = coalesce($2, description), "
                 "required_approvals = coalesce($3, required_approvals), "
                 "approver_role = coalesce($4, approver_role), "
                 "protected_aliases = coalesce($5::text[], protected_aliases), "
                 "four_eyes = coalesce($6, four_eyes), "
                 "revision = revision + 1, updated_at = now() WHERE id = $1",
                 id, update.description, update.policy.required_approvals, role, aliases,
                 four_eyes_column(update.policy));
}

} // namespace depot::registry
