// model_registry: models (a team's name for a bucket prefix) and their policy overrides.
#include "registry/service/model_registry.hpp"

#include "registry/repo/events.hpp"
#include "registry/repo/model_detail.hpp"
#include "registry/repo/model_versions.hpp"
#include "registry/repo/models.hpp"
#include "registry/service/lookup_cache.hpp"
#include "registry/transaction.hpp"

namespace depot::registry {
using namespace model_detail;

std::string_view to_string(four_eyes_rule r)
{
    return r == four_eyes_rule::all_contributors ? "all_contributors" : "author_and_submitter";
}

std::optional<four_eyes_rule> four_eyes_rule_of(std::string_view s)
{
    if (s == "author_and_submitter")
        return four_eyes_rule::author_and_submitter;
    if (s == "all_contributors")
        return four_eyes_rule::all_contributors;
    return std::nullopt;
}

// --- models ----------------------------------------------------------------------------------------------

asio::awaitable<result<model>> model_registry::create_model(const team& owner, model_spec spec,
                                                            const audit_context& who)
{
    auto work = [&](pg::connection& c) -> asio::awaitable<result<model>> {
        // A model is its team's name for files in the bucket: another team's model over the same files
        // would let that team's writers freeze (and its readers read) them. Which team's it is, is not told.
        if (co_await overlaps_another_teams_model(c, spec.bucket_id, spec.prefix, owner.id))
            co_return make_error(errc::conflict, "The prefix overlaps a model of another team in the bucket");
        const auto inserted = co_await insert_model(c, owner.id, spec, who.actor);
        if (!inserted)
            co_return make_error(errc::already_exists,
                                 "The team already has a model named '" + spec.name + "'");
        const auto id = *inserted;
        co_await record(c, id, std::nullopt, "model_created", who, "", std::nullopt, std::nullopt);
        auto created = co_await read_model(c, id);
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
    co_return co_await models_after(*conn, team_id, after, static_cast<std::int64_t>(limit));
}

asio::awaitable<result<model>> model_registry::get_model(std::int64_t team_id, std::string_view name)
{
    auto conn = co_await pool_.acquire();
    auto found = co_await find_model(*conn, team_id, name);
    if (!found)
        co_return make_error(errc::not_found, "No such model");
    co_return std::move(*found);
}

asio::awaitable<result<model>> model_registry::update_model(const model& m, model_update update,
                                                            std::optional<std::int64_t> expected_revision,
                                                            const audit_context& who)
{
    auto work = [&](pg::connection& c) -> asio::awaitable<result<model>> {
        const auto revision = co_await lock_model_revision(c, m.id);
        if (!revision)
            co_return make_error(errc::not_found, "No such model");
        if (expected_revision && *revision != *expected_revision)
            co_return make_error(errc::precondition_failed,
                                 "The model changed since it was read (If-Match does not match its ETag)");
        co_await update_model_row(c, m.id, update);
        auto updated = co_await read_model(c, m.id);
        // A protected alias only points at an approved version, so a name the policy now protects may be
        // neither a version's label (served under that name, unreviewed, with the alias never settable) nor
        // an alias at a version not approved (protecting `latest` at a draft would leave the Hub serving it).
        for (const auto& name : updated.policy.protected_aliases) {
            if (auto labelled = co_await version_by_label(c, m.id, name))
                co_return make_error(errc::conflict,
                                     "'" + name + "' is the label of version " +
                                         std::to_string(labelled->number) +
                                         ": a label never becomes a protected alias; protect another name");
            if (auto pointed = co_await version_by_alias(c, m.id, name);
                pointed && pointed->state != "approved")
                co_return make_error(errc::conflict,
                                     "The alias '" + name + "' points at version " +
                                         std::to_string(pointed->number) + ", which is " + pointed->state +
                                         ": point it at an approved version before protecting it");
        }
        co_await record(c, m.id, std::nullopt, "model_updated", who, "", std::nullopt, std::nullopt);
        co_return updated;
    };
    co_return co_await transact(pool_, work);
}

} // namespace depot::registry
