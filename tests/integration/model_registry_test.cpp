// The model registry's rules on a real PostgreSQL (registry/service/model_registry.hpp), through the service
// the REST API calls: four-eyes (the approver differs from the version's author and submitters, and with
// the all_contributors rule from everyone who wrote its files), and an alias scope bound to its alias's
// identity (a deleted alias reads nothing, whatever takes its name later).
#include "auth/scope_alias.hpp"
#include "integration/test_db.hpp"
#include "registry/repo/bucket_repository.hpp"
#include "registry/repo/identity_repository.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/service/credentials.hpp"
#include "registry/service/model_registry.hpp"
#include "registry/service/multipart_service.hpp"
#include "registry/service/object_service.hpp"
#include "storage/memory/memory_blob_store.hpp"

#include <boost/asio/this_coro.hpp>
#include <cstring>
#include <doctest/doctest.h>

using namespace depot;
namespace asio = boost::asio;

namespace {

class text_source final : public depot::byte_source
{
public:
    explicit text_source(std::string data) : data_(std::move(data)) {}
    asio::awaitable<result<std::size_t>> read_some(std::span<std::byte> buf) override
    {
        auto n = std::min(buf.size(), data_.size() - pos_);
        std::memcpy(buf.data(), data_.data() + pos_, n);
        pos_ += n;
        co_return n;
    }

private:
    std::string data_;
    std::size_t pos_ = 0;
};

registry::audit_context acting_as(std::string actor)
{
    return registry::audit_context{
        .actor = std::move(actor), .credential = "test", .request_id = "r", .client_addr = ""};
}

/// A migrated database, a memory store and the registry's services; users bob (maintainer), ci (writer),
/// carol (maintainer) and dave (writer) in team "vision", a bucket "work" of bob's and a model "resnet" on
/// its prefix "resnet/".
struct fixture
{
    test::test_database db{{.migrate = true}};
    std::unique_ptr<storage::blob_store> store = storage::make_memory_blob_store();
    std::shared_ptr<pg::pool> pool;
    std::unique_ptr<registry::object_service> objects;
    std::unique_ptr<registry::multipart_service> multipart;
    std::unique_ptr<registry::model_registry> models;
    std::unique_ptr<registry::credential_service> credentials;
    registry::bucket bucket;
    registry::team team;
    // Named: GCC 12 mishandles a braced temporary passed to a coroutine by value.
    const registry::version_spec no_spec;

    asio::awaitable<void> start()
    {
        auto executor = co_await asio::this_coro::executor;
        pg::pool_options options{.conninfo = db.url()};
        pool = pg::make_pool(executor, options);
        objects = std::make_unique<registry::object_service>(*pool, *store);
        multipart = std::make_unique<registry::multipart_service>(
            *pool, *store, registry::multipart_limits{.min_part_size = 1000});
        models = std::make_unique<registry::model_registry>(*pool, *store, *objects, *multipart);
        credentials = std::make_unique<registry::credential_service>(*pool, std::string(32, 'k'));
        registry::identity_repository ids(*pool, std::string(32, 'k'));
        for (const char* name : {"bob", "ci", "carol", "dave"}) {
            const registry::user u{.id = name, .display_name = name};
            REQUIRE(co_await ids.create_user(registry::system_audit_context(), u));
        }
        registry::bucket_repository buckets(*pool);
        auto b = co_await buckets.create(registry::system_audit_context(), "work", "bob", "us-east-1");
        REQUIRE(b);
        bucket = *b;
        registry::approval_policy defaults;
        auto t = co_await models->create_team(registry::system_audit_context(), "vision", defaults);
        REQUIRE(t);
        team = *t;
        for (auto [user, role] :
             {std::pair{"bob", registry::team_role::maintainer}, std::pair{"ci", registry::team_role::writer},
              std::pair{"carol", registry::team_role::maintainer},
              std::pair{"dave", registry::team_role::writer}})
            REQUIRE(co_await models->set_member(registry::system_audit_context(), team.id, user, role));
    }

    asio::awaitable<void> stop()
    {
        credentials.reset();
        models.reset();
        objects.reset();
        multipart.reset();
        pool.reset();
        co_return;
    }

    asio::awaitable<void> put(std::string key, std::string data, std::string owner)
    {
        text_source body(data);
        registry::put_object_request request{.target = &bucket,
                                             .key = std::move(key),
                                             .owner_id = std::move(owner),
                                             .content_length = data.size(),
                                             .body = &body};
        REQUIRE(co_await objects->put_object(registry::system_audit_context(), std::move(request)));
    }

    asio::awaitable<registry::model> model()
    {
        const registry::model_spec spec{.name = "resnet", .bucket_id = bucket.id, .prefix = "resnet/"};
        auto m = co_await models->create_model(team, spec, acting_as("bob"));
        REQUIRE(m);
        co_return *m;
    }

    asio::awaitable<std::int64_t> scalar(std::string q)
    {
        auto c = co_await pool->acquire();
        auto rs = co_await registry::sql(*c, q);
        co_return rs[0].i64(0);
    }
};

template <class F>
void with_fixture(F body)
{
    test::run([&]() -> asio::awaitable<void> {
        fixture f;
        co_await f.start();
        co_await body(f);
        co_await f.stop();
    }());
}

} // namespace

TEST_CASE("four-eyes: the author of a version cannot approve it, even when someone else submitted it")
{
    // Issue 34 item 12: bob (maintainer) created v1, the CI account submitted it, bob approved it: approved.
    with_fixture([](fixture& f) -> asio::awaitable<void> {
        co_await f.put("resnet/w.bin", "weights", "bob");
        auto m = co_await f.model();
        registry::version_spec spec;
        auto v = co_await f.models->create_version(m, spec, acting_as("bob"));
        REQUIRE(v);
        auto submitted =
            co_await f.models->transition_version(m, *v, registry::transition::submit, acting_as("ci"), "");
        REQUIRE(submitted);
        auto own = co_await f.models->approve(m, *submitted, acting_as("bob"), "lgtm");
        REQUIRE_FALSE(own);
        CHECK(own.error().code == errc::access_denied);
        CHECK(own.error().message == "The author of a version cannot approve it");
        // Nothing changed: still pending, no approval recorded.
        auto still = co_await f.models->get_version(m, "1", false);
        REQUIRE(still);
        CHECK(still->state == "pending");
        CHECK(still->approvals.empty());
        CHECK(co_await f.scalar("SELECT count(*) FROM model_events WHERE action = 'approval'") == 0);
        // The submitter cannot either; a third maintainer can.
        auto by_submitter = co_await f.models->approve(m, *submitted, acting_as("ci"), "");
        REQUIRE_FALSE(by_submitter);
        CHECK(by_submitter.error().message == "The submitter of a version cannot approve it");
        auto approved = co_await f.models->approve(m, *submitted, acting_as("carol"), "ok");
        REQUIRE(approved);
        CHECK(approved->state == "approved");
    });
}

TEST_CASE("four-eyes: anyone who ever submitted a version cannot approve it")
{
    with_fixture([](fixture& f) -> asio::awaitable<void> {
        co_await f.put("resnet/w.bin", "weights", "bob");
        auto m = co_await f.model();
        auto v = co_await f.models->create_version(m, f.no_spec, acting_as("dave"));
        REQUIRE(v);
        REQUIRE(
            co_await f.models->transition_version(m, *v, registry::transition::submit, acting_as("bob"), ""));
        REQUIRE(co_await f.models->transition_version(m, *v, registry::transition::reject, acting_as("carol"),
                                                      "no"));
        auto again =
            co_await f.models->transition_version(m, *v, registry::transition::submit, acting_as("ci"), "");
        REQUIRE(again);
        auto earlier_submitter = co_await f.models->approve(m, *again, acting_as("bob"), "");
        REQUIRE_FALSE(earlier_submitter);
        CHECK(earlier_submitter.error().code == errc::access_denied);
        CHECK(co_await f.models->approve(m, *again, acting_as("carol"), ""));
    });
}

TEST_CASE("four-eyes all_contributors: whoever wrote a file of the version cannot approve it")
{
    with_fixture([](fixture& f) -> asio::awaitable<void> {
        co_await f.put("resnet/config.json", "{}", "bob");
        co_await f.put("resnet/w.bin", "weights written by carol", "carol");
        // The default rule does not look at the files' writers: carol may approve.
        {
            auto m = co_await f.model();
            CHECK(m.policy.four_eyes == registry::four_eyes_rule::author_and_submitter);
            auto v = co_await f.models->create_version(m, f.no_spec, acting_as("dave"));
            REQUIRE(v);
            CHECK(v->contributors == std::vector<std::string>{"bob", "carol"});
            auto s = co_await f.models->transition_version(m, *v, registry::transition::submit,
                                                           acting_as("ci"), "");
            REQUIRE(s);
            CHECK(co_await f.models->approve(m, *s, acting_as("carol"), ""));
        }
        // The model asks for all contributors: carol (a file's writer) and bob are refused.
        auto found = co_await f.models->get_model(f.team.id, "resnet");
        REQUIRE(found);
        registry::model_update update;
        update.policy.four_eyes = registry::four_eyes_rule::all_contributors;
        auto m = co_await f.models->update_model(*found, update, std::nullopt, acting_as("bob"));
        REQUIRE(m);
        CHECK(m->policy.four_eyes == registry::four_eyes_rule::all_contributors);
        auto v = co_await f.models->create_version(*m, f.no_spec, acting_as("dave"));
        REQUIRE(v);
        auto s =
            co_await f.models->transition_version(*m, *v, registry::transition::submit, acting_as("ci"), "");
        REQUIRE(s);
        for (const char* writer : {"carol", "bob"}) {
            auto refused = co_await f.models->approve(*m, *s, acting_as(writer), "");
            REQUIRE_FALSE(refused);
            CHECK(refused.error().code == errc::access_denied);
        }
        auto still = co_await f.models->get_version(*m, "2", false);
        REQUIRE(still);
        CHECK(still->state == "pending");
        CHECK(still->approvals.empty());
    });
}

TEST_CASE("an alias scope names the alias itself: deleted, it reads nothing, whatever takes its name")
{
    // Issue 34 item 8: prod -> approved v1, a token scoped to {model, alias: prod}; a maintainer deletes
    // prod, a writer labels a draft "prod": the token resolved "prod" by name and read the draft.
    with_fixture([](fixture& f) -> asio::awaitable<void> {
        co_await f.put("resnet/w.bin", "approved weights", "bob");
        auto m = co_await f.model();
        auto v1 = co_await f.models->create_version(m, f.no_spec, acting_as("bob"));
        REQUIRE(v1);
        REQUIRE(co_await f.models->set_alias(m, "prod", *v1, acting_as("bob")));
        // A scope for an alias that does not exist cannot be made; one that does is bound to its id.
        const std::string staging_scope = R"({"alias":"staging","model":"vision/resnet"})";
        const std::string prod_scope = R"({"alias":"prod","model":"vision/resnet"})";
        auto none =
            co_await f.credentials->create_token(acting_as("bob"), "bob", "t", std::nullopt, staging_scope);
        REQUIRE_FALSE(none);
        CHECK(none.error().code == errc::invalid_argument);
        auto tok =
            co_await f.credentials->create_token(acting_as("bob"), "bob", "t", std::nullopt, prod_scope);
        REQUIRE(tok);
        const auto alias_id = auth::scope_alias_id(tok->scope);
        const auto aliases = co_await f.models->aliases(m.id);
        REQUIRE(aliases.size() == 2); // latest, prod
        const auto prod = aliases[1];
        CHECK(prod.name == "prod");
        CHECK(alias_id == prod.id);
        auto reads = co_await f.models->version_of_alias(m, alias_id);
        REQUIRE(reads);
        CHECK(reads->number == 1);
        CHECK(co_await f.credentials->alias_has_file(m.id, alias_id, "w.bin"));

        // The alias is deleted; a writer freezes a draft labelled "prod", and a maintainer even makes a new
        // alias "prod" later: neither is the alias the token was made for.
        REQUIRE(co_await f.models->delete_alias(m, "prod", acting_as("bob")));
        co_await f.put("resnet/w.bin", "unreviewed draft", "dave");
        registry::version_spec draft;
        draft.label = "prod";
        auto v2 = co_await f.models->create_version(m, draft, acting_as("dave"));
        REQUIRE(v2);
        CHECK_FALSE(co_await f.models->version_of_alias(m, alias_id));
        CHECK_FALSE(co_await f.credentials->alias_has_file(m.id, alias_id, "w.bin"));
        // By name "prod" is now the label (what a caller without an alias scope addresses).
        auto by_name = co_await f.models->get_version(m, "prod", true);
        REQUIRE(by_name);
        CHECK(by_name->number == 2);
        // A repeated alias_id that names a deleted alias is refused, not rebound.
        const std::string stale_scope =
            R"({"alias":"latest","alias_id":)" + std::to_string(alias_id) + R"(,"model":"vision/resnet"})";
        auto stale =
            co_await f.credentials->create_token(acting_as("bob"), "bob", "t", std::nullopt, stale_scope);
        REQUIRE_FALSE(stale);
        CHECK(stale.error().code == errc::invalid_argument);
    });
}

TEST_CASE("a version is complete when it is visible: SSE-C files are refused by name, nothing commits")
{
    // Issue 34 items 15 and 16: every file's SHA-256 is recorded by the version's own transaction; a file
    // under a customer key (its digest cannot be computed) refuses the version naming it, before anything
    // commits, and does not concern other models.
    with_fixture([](fixture& f) -> asio::awaitable<void> {
        co_await f.put("resnet/w.bin", "weights", "bob");
        co_await f.put("other/w.bin", "weights", "bob");
        auto m = co_await f.model();
        // An SSE-C object uploaded in parts (no digest known) under the prefix.
        registry::object_headers headers;
        const std::vector<s3::tag> no_tags;
        const registry::sse_spec customer{.mode = registry::sealing::customer,
                                          .customer_key = std::string(32, 'c')};
        auto upload = co_await f.multipart->create(registry::system_audit_context(), f.bucket,
                                                   "resnet/secret.bin", "bob", headers, std::nullopt,
                                                   std::nullopt, {}, registry::no_lock, customer);
        REQUIRE(upload);
        text_source body(std::string(2000, 's'));
        registry::ingest_limits limits{.content_length = 2000};
        auto part = co_await f.multipart->upload_part(registry::system_audit_context(), *upload, 1, body,
                                                      limits, customer.customer_key);
        REQUIRE(part);
        std::vector<registry::completed_part_ref> parts{{1, part->etag, ""}};
        // Completed by the version itself: it used to commit the version, then fail hashing the new file
        // (an error answered for a version that had committed). Now the error comes first and nothing
        // commits: no version, the upload still open, no object at its key.
        {
            auto found = co_await f.multipart->find(f.bucket.id, "resnet/secret.bin", upload->upload_id);
            REQUIRE(found);
            registry::version_spec spec;
            spec.uploads.push_back(
                registry::version_upload{.path = "secret.bin", .upload = *found, .parts = parts});
            auto refused = co_await f.models->create_version(m, spec, acting_as("bob"));
            REQUIRE_FALSE(refused);
            CHECK(refused.error().code == errc::conflict);
            CHECK(refused.error().argument == "uploads");
            CHECK(co_await f.scalar("SELECT count(*) FROM model_versions") == 0);
            CHECK(co_await f.scalar("SELECT count(*) FROM multipart_uploads") == 1);
            CHECK_FALSE(co_await f.objects->open_object(f.bucket.id, "resnet/secret.bin"));
        }
        REQUIRE(co_await f.multipart->complete(registry::system_audit_context(), f.bucket.id,
                                               "resnet/secret.bin", upload->upload_id, parts));
        const auto events_before = co_await f.scalar("SELECT count(*) FROM events");
        auto refused = co_await f.models->create_version(m, f.no_spec, acting_as("bob"));
        REQUIRE_FALSE(refused);
        CHECK(refused.error().code == errc::conflict);
        CHECK(refused.error().message.find("'secret.bin'") != std::string::npos);
        CHECK(co_await f.scalar("SELECT count(*) FROM model_versions") == 0);
        CHECK(co_await f.scalar("SELECT count(*) FROM model_files") == 0);
        CHECK(co_await f.scalar("SELECT count(*) FROM model_aliases") == 0);
        CHECK(co_await f.scalar("SELECT count(*) FROM events") == events_before);

        // Another model's prefix is not concerned.
        registry::model_spec other{.name = "other", .bucket_id = f.bucket.id, .prefix = "other/"};
        auto o = co_await f.models->create_model(f.team, other, acting_as("bob"));
        REQUIRE(o);
        auto ov = co_await f.models->create_version(*o, f.no_spec, acting_as("bob"));
        REQUIRE(ov);

        // Without the file the version commits, every SHA-256 known by the commit.
        REQUIRE(co_await f.objects->delete_object(registry::system_audit_context(), f.bucket.id,
                                                  "resnet/secret.bin"));
        auto v = co_await f.models->create_version(m, f.no_spec, acting_as("bob"));
        REQUIRE(v);
        CHECK(co_await f.scalar("SELECT count(*) FROM model_files WHERE sha256 IS NULL") == 0);
    });
}
