// The model registry's repositories (registry/repo/model_teams, models, model_versions, model_approvals,
// model_aliases) on a real PostgreSQL: what each statement returns and when it finds nothing, as the
// model_registry service relies on it (conflicts as nullopt, labels and aliases excluding each other, the
// approvals counted from the last submission, an alias deletion naming the version it left).
#include "integration/test_db.hpp"
#include "registry/repo/audit.hpp"
#include "registry/repo/bucket_repository.hpp"
#include "registry/repo/identity_repository.hpp"
#include "registry/repo/model_aliases.hpp"
#include "registry/repo/model_approvals.hpp"
#include "registry/repo/model_detail.hpp"
#include "registry/repo/model_teams.hpp"
#include "registry/repo/model_versions.hpp"
#include "registry/repo/models.hpp"
#include "registry/transaction.hpp"

#include <boost/asio/this_coro.hpp>
#include <doctest/doctest.h>

using namespace depot;
namespace asio = boost::asio;

namespace {

struct model_fixture
{
    test::test_database db{{.migrate = true}};
    std::shared_ptr<pg::pool> pool;
    std::int64_t bucket_id = 0;

    asio::awaitable<void> start()
    {
        auto executor = co_await asio::this_coro::executor;
        pg::pool_options options{.conninfo = db.url()};
        pool = pg::make_pool(executor, options);
        registry::identity_repository ids(*pool, std::string(32, 'k'));
        registry::bucket_repository buckets(*pool);
        // Named users: GCC 12 mishandles a braced temporary passed to a coroutine by value.
        const registry::user carol{.id = "carol", .display_name = "Carol"};
        const registry::user dave{.id = "dave", .display_name = "Dave"};
        REQUIRE(co_await ids.create_user(registry::system_audit_context(), carol));
        REQUIRE(co_await ids.create_user(registry::system_audit_context(), dave));
        auto b = co_await buckets.create(registry::system_audit_context(), "weights", "carol", "us-east-1");
        REQUIRE(b);
        bucket_id = b->id;
    }

    asio::awaitable<void> stop()
    {
        pool.reset();
        co_return;
    }
};

registry::audit_context as(std::string actor)
{
    return registry::audit_context{
        .actor = std::move(actor), .credential = "test", .request_id = "r", .client_addr = ""};
}

} // namespace

TEST_CASE("model repositories: teams and members")
{
    model_fixture f;
    test::run([&]() -> asio::awaitable<void> {
        co_await f.start();
        auto conn = co_await f.pool->acquire();
        const registry::approval_policy defaults{.required_approvals = 2,
                                                 .approver_role = registry::team_role::admin,
                                                 .protected_aliases = {"prod", "staging"}};
        auto t = co_await registry::insert_team(*conn, "vision", defaults);
        REQUIRE(t);
        CHECK(t->name == "vision");
        CHECK(t->default_policy.required_approvals == 2);
        CHECK(t->default_policy.approver_role == registry::team_role::admin);
        CHECK(t->default_policy.protected_aliases == std::vector<std::string>{"prod", "staging"});
        CHECK_FALSE(co_await registry::insert_team(*conn, "vision", defaults));
        auto found = co_await registry::find_team(*conn, "vision");
        REQUIRE(found);
        CHECK(found->id == t->id);
        CHECK_FALSE(co_await registry::find_team(*conn, "audio"));

        CHECK(co_await registry::display_name_of_user(*conn, "carol") == std::optional<std::string>("Carol"));
        CHECK_FALSE(co_await registry::display_name_of_user(*conn, "nobody"));
        auto added = co_await registry::upsert_member(*conn, t->id, "carol", registry::team_role::reader);
        CHECK(added.team_name == "vision");
        auto changed =
            co_await registry::upsert_member(*conn, t->id, "carol", registry::team_role::maintainer);
        CHECK(changed.added_at == added.added_at); // a member keeps its added_at
        CHECK(co_await registry::member_role(*conn, t->id, "carol") == registry::team_role::maintainer);
        CHECK_FALSE(co_await registry::member_role(*conn, t->id, "dave"));
        auto members = co_await registry::team_members(*conn, t->id);
        REQUIRE(members.size() == 1);
        CHECK(members[0].display_name == "Carol");
        CHECK((co_await registry::teams_with_member(*conn, "carol", false)).size() == 1);
        CHECK((co_await registry::teams_with_member(*conn, "dave", false)).empty());
        CHECK((co_await registry::teams_with_member(*conn, "dave", true)).size() == 1);

        CHECK_FALSE(co_await registry::delete_member(*conn, t->id, "dave"));
        CHECK(co_await registry::delete_member(*conn, t->id, "carol") ==
              std::optional<std::string>("vision"));
        CHECK_FALSE(co_await registry::member_role(*conn, t->id, "carol"));
        conn = pg::pooled_connection(); // back to the pool before it goes
        co_await f.stop();
    });
}

TEST_CASE("model repositories: models, versions, aliases and approvals")
{
    model_fixture f;
    test::run([&]() -> asio::awaitable<void> {
        co_await f.start();
        auto conn = co_await f.pool->acquire();
        const registry::approval_policy defaults;
        auto t = co_await registry::insert_team(*conn, "vision", defaults);
        REQUIRE(t);

        // Models: a second one of the same name is a conflict; the overrides apply over the team's policy.
        registry::model_spec spec{.name = "resnet", .bucket_id = f.bucket_id, .prefix = "resnet/"};
        spec.policy.required_approvals = 3;
        auto id = co_await registry::insert_model(*conn, t->id, spec, "carol");
        REQUIRE(id);
        CHECK_FALSE(co_await registry::insert_model(*conn, t->id, spec, "carol"));
        auto m = co_await registry::read_model(*conn, *id);
        CHECK(m.name == "resnet");
        CHECK(m.bucket == "weights");
        CHECK(m.policy.required_approvals == 3);
        CHECK(m.version_count == 0);
        CHECK((co_await registry::find_model(*conn, t->id, "resnet")).has_value());
        CHECK_FALSE(co_await registry::find_model(*conn, t->id, "vit"));
        CHECK(co_await registry::lock_model_revision(*conn, m.id) == std::optional<std::int64_t>(m.revision));
        registry::model_update update;
        update.description = "image classifier";
        co_await registry::update_model_row(*conn, m.id, update);
        auto updated = co_await registry::read_model(*conn, m.id);
        CHECK(updated.description == "image classifier");
        CHECK(updated.revision == m.revision + 1);
        CHECK(updated.policy.required_approvals == 3); // an unset field keeps its value
        CHECK((co_await registry::models_after(*conn, t->id, "", 10)).size() == 1);
        CHECK((co_await registry::models_after(*conn, t->id, "resnet", 10)).empty());

        // Versions: numbered from the model's counter; a label is taken by a version (or an alias).
        CHECK(co_await registry::lock_next_version(*conn, m.id) == std::optional<std::int64_t>(1));
        CHECK_FALSE(co_await registry::lock_next_version(*conn, m.id + 1000));
        registry::version_spec vs;
        vs.label = "v1";
        const auto vid = co_await registry::insert_version(*conn, m.id, 1, vs, "carol");
        const registry::freeze_source empty_prefix{
            .bucket_id = f.bucket_id, .prefix = "resnet/", .upper = "resnet0"};
        co_await registry::freeze_prefix(*conn, vid, empty_prefix);
        co_await registry::advance_next_version(*conn, m.id);
        CHECK(co_await registry::lock_next_version(*conn, m.id) == std::optional<std::int64_t>(2));
        CHECK(co_await registry::label_taken(*conn, m.id, "v1"));
        CHECK_FALSE(co_await registry::label_taken(*conn, m.id, "prod"));
        auto v = co_await registry::read_version(*conn, vid);
        CHECK(v.number == 1);
        CHECK(v.state == "draft");
        CHECK(v.file_count == 0);
        CHECK((co_await registry::version_by_number(*conn, m.id, 1)).has_value());
        CHECK_FALSE(co_await registry::version_by_number(*conn, m.id, 2));
        CHECK((co_await registry::version_by_label(*conn, m.id, "v1")).has_value());
        CHECK_FALSE(co_await registry::version_by_label(*conn, m.id, "v2"));
        CHECK((co_await registry::versions_before(*conn, m.id, 0, 10)).size() == 1);
        CHECK((co_await registry::versions_before(*conn, m.id, 1, 10)).empty());
        CHECK((co_await registry::version_files(*conn, vid, "", 10, false)).empty());
        CHECK_FALSE(co_await registry::version_file(*conn, vid, "model.safetensors"));

        // Aliases: an alias name is taken as a label too; its deletion names the version it left.
        const auto dave = as("dave");
        auto moved =
            co_await registry::transact(*f.pool, [&](pg::connection& c) -> asio::awaitable<result<void>> {
                co_await registry::model_detail::move_alias(c, m, "prod", vid, 1, dave);
                co_return ok();
            });
        REQUIRE(moved);
        CHECK(co_await registry::label_taken(*conn, m.id, "prod"));
        CHECK(co_await registry::is_version_label(*conn, m.id, "v1"));
        CHECK_FALSE(co_await registry::is_version_label(*conn, m.id, "prod"));
        auto alias = co_await registry::lock_alias(*conn, m.id, "prod");
        REQUIRE(alias);
        CHECK(alias->version == 1);
        CHECK(alias->updated_by == "dave");
        CHECK_FALSE(co_await registry::lock_alias(*conn, m.id, "staging"));
        CHECK((co_await registry::aliases_of(*conn, m.id)).size() == 1);
        CHECK((co_await registry::version_by_alias(*conn, m.id, "prod")).has_value());

        // Approvals count from the last submission; the submitter is known.
        auto none = co_await registry::last_submission(*conn, vid);
        CHECK(none.event_id == 0);
        CHECK(none.actor.empty());
        CHECK(co_await registry::lock_version_state(*conn, vid) == std::optional<std::string>("draft"));
        CHECK_FALSE(co_await registry::lock_version_state(*conn, vid + 1000));
        co_await registry::set_version_state(*conn, vid, "pending");
        CHECK(co_await registry::share_version_state(*conn, vid) == std::optional<std::string>("pending"));
        const auto carol = as("carol");
        co_await registry::model_detail::record(*conn, m.id, vid, "submitted", carol, "",
                                                std::string("draft"), std::string("pending"));
        auto submitted = co_await registry::last_submission(*conn, vid);
        CHECK(submitted.event_id > 0);
        CHECK(submitted.actor == "carol");
        CHECK_FALSE(co_await registry::approved_since(*conn, vid, submitted.event_id, "dave"));
        const auto maintainer = registry::team_role::maintainer;
        CHECK(co_await registry::approvers_since(*conn, vid, submitted.event_id, t->id, maintainer) == 0);
        co_await registry::model_detail::record(*conn, m.id, vid, "approval", dave, "ok",
                                                std::string("pending"), std::nullopt);
        CHECK(co_await registry::approved_since(*conn, vid, submitted.event_id, "dave"));
        CHECK_FALSE(co_await registry::approved_since(*conn, vid, submitted.event_id, "carol"));
        // An approval counts while its approver may approve: a member with the approver role (or more).
        CHECK(co_await registry::approvers_since(*conn, vid, submitted.event_id, t->id, maintainer) == 0);
        co_await registry::upsert_member(*conn, t->id, "dave", registry::team_role::writer);
        CHECK(co_await registry::approvers_since(*conn, vid, submitted.event_id, t->id, maintainer) == 0);
        co_await registry::upsert_member(*conn, t->id, "dave", registry::team_role::admin);
        CHECK(co_await registry::approvers_since(*conn, vid, submitted.event_id, t->id, maintainer) == 1);
        CHECK(co_await registry::approvers_since(*conn, vid, submitted.event_id, t->id,
                                                 registry::team_role::admin) == 1);
        co_await registry::mark_version_approved(*conn, vid);
        CHECK(co_await registry::lock_version_state(*conn, vid) == std::optional<std::string>("approved"));
        const std::optional<std::int64_t> of_version = vid, of_model;
        auto events = co_await registry::model_events_after(*conn, m.id, of_version, 0, 100);
        REQUIRE(events.size() == 3); // alias_set, submitted, approval
        CHECK(events[0].action == "alias_set");
        CHECK(events[2].action == "approval");
        CHECK(events[2].version == std::optional<int>(1));
        CHECK((co_await registry::model_events_after(*conn, m.id, of_model, events[1].id, 100)).size() == 1);

        // Archived versions are not reached through an alias.
        co_await registry::set_version_state(*conn, vid, "archived");
        CHECK_FALSE(co_await registry::version_by_alias(*conn, m.id, "prod"));
        auto deleted = co_await registry::delete_alias_row(*conn, m.id, "prod");
        REQUIRE(deleted);
        CHECK(deleted->version_id == vid);
        CHECK(deleted->number == 1);
        CHECK_FALSE(co_await registry::delete_alias_row(*conn, m.id, "prod"));
        conn = pg::pooled_connection(); // back to the pool before it goes
        co_await f.stop();
    });
}
