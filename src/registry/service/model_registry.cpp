// model_registry: models (a team's name for a bucket prefix) and their policy overrides.
#include "registry/service/model_registry.hpp"

#include "registry/repo/events.hpp"
#include "registry/repo/model_detail.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/service/lookup_cache.hpp"
#include "registry/transaction.hpp"

namespace depot::registry {
using namespace model_detail;

// --- models ----------------------------------------------------------------------------------------------

asio::awaitable<result<model>> model_registry::create_model(const team& owner, model_spec spec,
                                                            const audit_context& who)
{
    auto work = [&](pg::connection& c) -> asio::awaitable<result<model>> {
        std::optional<std::string> role;
        if (spec.policy.approver_role)
            role = std::string(to_string(*spec.policy.approver_role));
        std::optional<std::string> aliases;
        if (spec.policy.protected_aliases)
            aliases = text_array(*spec.policy.protected_aliases);
        auto rs = co_await sql(c,
                               "INSERT INTO models (team_id, name, bucket_id, prefix, description, "
                               "required_approvals, approver_role, protected_aliases, created_by) "
                               "VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text[], $9) "
                               "ON CONFLICT (team_id, name) DO NOTHING RETURNING id",
                               owner.id, spec.name, spec.bucket_id, spec.prefix, spec.description,
                               spec.policy.required_approvals, role, aliases, who.actor);
        if (rs.empty())
            co_return make_error(errc::already_exists,
                                 "The team already has a model named '" + spec.name + "'");
        const auto id = rs[0].i64(0);
        co_await record(c, id, std::nullopt, "model_created", who, "", std::nullopt, std::nullopt);
        auto rows = co_await sql(c, std::string(model_select) + "WHERE m.id = $1", id);
        auto created = model_of(rows[0]);
        const std::string data = event_data(created, who,
                                            ",\"bucket\":" + events::quote(created.bucket) +
                                                ",\"prefix\":" + events::quote(created.prefix) +
                                                ",\"description\":" + events::quote(created.description));
        co_await events::emit_model_event(c, "model.created", created.team_id, created.id, created.bucket_id,
                                          std::nullopt, data);
        co_return created;
    };
    auto created = co_await transact(pool_, work);
    // The bucket now has a model: its GETs record model downloads from this process's next request on.
    if (created && cache_)
        cache_->forget_bucket_id(created->bucket_id);
    co_return created;
}

asio::awaitable<std::vector<model>> model_registry::models(std::int64_t team_id, std::string_view after,
                                                           std::size_t limit)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(
        *conn, std::string(model_select) + "WHERE m.team_id = $1 AND m.name > $2 ORDER BY m.name LIMIT $3",
        team_id, after, static_cast<std::int64_t>(limit));
    std::vector<model> out;
    for (auto r : rs)
        out.push_back(model_of(r));
    co_return out;
}

asio::awaitable<result<model>> model_registry::get_model(std::int64_t team_id, std::string_view name)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn, std::string(model_select) + "WHERE m.team_id = $1 AND m.name = $2", team_id,
                           name);
    if (rs.empty())
        co_return make_error(errc::not_found, "No such model");
    co_return model_of(rs[0]);
}

asio::awaitable<result<model>> model_registry::update_model(const model& m, model_update update,
                                                            std::optional<std::int64_t> expected_revision,
                                                            const audit_context& who)
{
    auto work = [&](pg::connection& c) -> asio::awaitable<result<model>> {
        auto cur = co_await sql(c, "SELECT revision FROM models WHERE id = $1 FOR UPDATE", m.id);
        if (cur.empty())
            co_return make_error(errc::not_found, "No such model");
        if (expected_revision && cur[0].i64(0) != *expected_revision)
            co_return make_error(errc::precondition_failed,
                                 "The model changed since it was read (If-Match does not match its ETag)");
        std::optional<std::string> role;
        if (update.policy.approver_role)
            role = std::string(to_string(*update.policy.approver_role));
        std::optional<std::string> aliases;
        if (update.policy.protected_aliases)
            aliases = text_array(*update.policy.protected_aliases);
        co_await sql(c,
                     "UPDATE models SET description = coalesce($2, description), "
                     "required_approvals = coalesce($3, required_approvals), "
                     "approver_role = coalesce($4, approver_role), "
                     "protected_aliases = coalesce($5::text[], protected_aliases), "
                     "revision = revision + 1, updated_at = now() WHERE id = $1",
                     m.id, update.description, update.policy.required_approvals, role, aliases);
        co_await record(c, m.id, std::nullopt, "model_updated", who, "", std::nullopt, std::nullopt);
        auto rs = co_await sql(c, std::string(model_select) + "WHERE m.id = $1", m.id);
        co_return model_of(rs[0]);
    };
    co_return co_await transact(pool_, work);
}

} // namespace depot::registry
