// The lookup cache against a real PostgreSQL: schema 0012's triggers and a LISTEN thread keep it right when
// another process (here: repositories without the cache, or plain SQL) changes keys and buckets, and it
// stops serving while its LISTEN connection is gone.
#include "auth/bucket_policy.hpp"
#include "integration/test_db.hpp"
#include "registry/pg/listener.hpp"
#include "registry/repo/audit.hpp"
#include "registry/repo/bucket_repository.hpp"
#include "registry/repo/identity_repository.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/service/lookup_cache.hpp"

#include <atomic>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <doctest/doctest.h>
#include <functional>
#include <thread>

using namespace depot;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

const std::string server_key(32, 'k');

/// A cache fed by a LISTEN thread on the test database: what depotd's server.cpp sets up.
struct listened_cache
{
    explicit listened_cache(const std::string& url)
    {
        thread = std::thread([this, url] {
            pg::listen_until(url, "depot_cache", "depot-test-cache", "test cache", stopping,
                             {.connected = [this] { cache.listening(); },
                              .notified =
                                  [this](const std::vector<std::string>& payloads) {
                                      for (const auto& p : payloads)
                                          cache.notified(p);
                                  },
                              .disconnected = [this] { cache.not_listening(); }});
        });
    }
    ~listened_cache()
    {
        stopping = true;
        thread.join();
    }

    registry::lookup_cache cache{{}};
    std::atomic<bool> stopping{false};
    std::thread thread;
};

/// Polls `done` every 10 ms for up to 10 s (a notice normally arrives within milliseconds).
asio::awaitable<bool> eventually(std::function<asio::awaitable<bool>()> done)
{
    asio::steady_timer timer(co_await asio::this_coro::executor);
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
        if (co_await done())
            co_return true;
        timer.expires_after(10ms);
        co_await timer.async_wait(asio::use_awaitable);
    }
    co_return false;
}

asio::awaitable<void> exec(pg::pool& pool, std::string sql)
{
    auto c = co_await pool.acquire();
    co_await c->execute(sql);
}

} // namespace

TEST_CASE("lookup cache: changes made elsewhere reach it through the triggers' notices")
{
    test::test_database db({.migrate = true});
    listened_cache lc(db.url());
    test::run([&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto pool = pg::make_pool(ex, {.conninfo = db.url()});
        REQUIRE(co_await eventually([&]() -> asio::awaitable<bool> { co_return lc.cache.is_listening(); }));

        registry::identity_repository cached_ids(*pool, server_key, &lc.cache);
        registry::identity_repository other_ids(*pool, server_key); // another depotd, or depotctl
        registry::bucket_repository cached_buckets(*pool, &lc.cache);
        registry::bucket_repository other_buckets(*pool);
        const registry::user alice{.id = "alice", .display_name = "Alice"}; // (not in co_await: GCC 12)
        REQUIRE(co_await other_ids.create_user(registry::system_audit_context(), alice));
        auto key = co_await other_ids.create_key(registry::system_audit_context(), "alice");
        REQUIRE(key);
        const std::string id = key->access_key_id;
        REQUIRE(
            co_await other_buckets.create(registry::system_audit_context(), "cached", "alice", "us-east-1"));

        // Cached: a change that sends no notice (the trigger disabled for its transaction) is not seen.
        REQUIRE(co_await cached_ids.find_active_key(id));
        REQUIRE(co_await cached_buckets.get("cached"));
        co_await exec(*pool, "BEGIN; ALTER TABLE access_keys DISABLE TRIGGER access_keys_cache; "
                             "ALTER TABLE buckets DISABLE TRIGGER buckets_cache; "
                             "UPDATE access_keys SET scope = '{\"read_only\": true}'; "
                             "UPDATE buckets SET dedup = false; "
                             "ALTER TABLE access_keys ENABLE TRIGGER access_keys_cache; "
                             "ALTER TABLE buckets ENABLE TRIGGER buckets_cache; COMMIT");
        CHECK((co_await cached_ids.find_active_key(id))->scope.empty());
        CHECK((co_await cached_buckets.get("cached"))->dedup);
        CHECK((co_await other_buckets.get("cached"))->dedup == false);

        SUBCASE("a bucket change and a bucket deletion")
        {
            REQUIRE(
                co_await other_buckets.set_object_events(registry::system_audit_context(), "cached", true));
            CHECK(co_await eventually([&]() -> asio::awaitable<bool> {
                auto b = co_await cached_buckets.get("cached");
                co_return b && b->object_events && !b->dedup;
            }));
            REQUIRE(co_await other_buckets.remove(registry::system_audit_context(), "cached"));
            CHECK(co_await eventually([&]() -> asio::awaitable<bool> {
                auto b = co_await cached_buckets.get("cached");
                co_return !b && b.error().code == errc::no_such_bucket;
            }));
        }
        SUBCASE(
            "a bucket policy set elsewhere reaches the cache parsed; one that no longer parses denies all")
        {
            std::optional<std::string> doc =
                R"({"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":"*",)"
                R"("Action":"s3:GetObject","Resource":"arn:aws:s3:::cached/*"}})";
            const std::string sent = *doc;
            REQUIRE(co_await other_buckets.set_policy(registry::system_audit_context(), "cached",
                                                      std::move(doc)));
            CHECK(co_await eventually([&]() -> asio::awaitable<bool> {
                auto b = co_await cached_buckets.get("cached");
                co_return b && b->policy == sent && b->parsed_policy&& auth::is_public(*b->parsed_policy);
            }));
            co_await exec(*pool, "UPDATE buckets SET policy = '{\"Statement\":[]}' WHERE name = 'cached'");
            CHECK(co_await eventually([&]() -> asio::awaitable<bool> {
                auto b = co_await cached_buckets.get("cached");
                co_return b && b->parsed_policy && b->parsed_policy->statements.size() == 1 &&
                    !b->parsed_policy->statements[0].allow;
            }));
            std::optional<std::string> none;
            REQUIRE(co_await cached_buckets.set_policy(registry::system_audit_context(), "cached",
                                                       std::move(none)));
            auto b = co_await cached_buckets.get("cached");
            REQUIRE(b);
            CHECK(b->policy.empty());
            CHECK_FALSE(b->parsed_policy);
        }
        SUBCASE("a revocation, and an expiry set with SQL")
        {
            auto second = co_await other_ids.create_key(registry::system_audit_context(), "alice");
            REQUIRE(second);
            REQUIRE(co_await cached_ids.find_active_key(second->access_key_id));
            REQUIRE(co_await other_ids.revoke_key(registry::system_audit_context(), id));
            CHECK(co_await eventually(
                [&]() -> asio::awaitable<bool> { co_return !(co_await cached_ids.find_active_key(id)); }));
            co_await exec(*pool, "UPDATE access_keys SET expires_at = now() WHERE access_key_id = '" +
                                     second->access_key_id + "'");
            CHECK(co_await eventually([&]() -> asio::awaitable<bool> {
                co_return !(co_await cached_ids.find_active_key(second->access_key_id));
            }));
        }
        SUBCASE("a user's change drops everything")
        {
            co_await exec(*pool, "UPDATE users SET display_name = 'Alice Renamed' WHERE id = 'alice'");
            CHECK(co_await eventually([&]() -> asio::awaitable<bool> {
                auto k = co_await cached_ids.find_active_key(id);
                auto b = co_await cached_buckets.get("cached");
                co_return k && k->user_display_name == "Alice Renamed" && b && !b->dedup &&
                    b->owner_display_name == "Alice Renamed";
            }));
        }
        SUBCASE("changes made through the cached repositories are seen at once")
        {
            REQUIRE(co_await cached_buckets.set_dedup(registry::system_audit_context(), "cached", true));
            CHECK((co_await cached_buckets.get("cached"))->dedup);
            REQUIRE(co_await cached_ids.revoke_key(registry::system_audit_context(), id));
            auto gone = co_await cached_ids.find_active_key(id);
            REQUIRE_FALSE(gone);
            CHECK(gone.error().code == errc::not_found);
        }
        pool.reset();
    });
}

TEST_CASE("lookup cache: while its LISTEN connection is gone nothing is served from it")
{
    test::test_database db({.migrate = true});
    listened_cache lc(db.url());
    test::run([&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto pool = pg::make_pool(ex, {.conninfo = db.url()});
        REQUIRE(co_await eventually([&]() -> asio::awaitable<bool> { co_return lc.cache.is_listening(); }));
        registry::identity_repository ids(*pool, server_key, &lc.cache);
        const registry::user alice{.id = "alice", .display_name = "Alice"}; // (not in co_await: GCC 12)
        REQUIRE(co_await ids.create_user(registry::system_audit_context(), alice));
        auto key = co_await ids.create_key(registry::system_audit_context(), "alice");
        REQUIRE(key);
        // The key's own insert notice (schema 0014) may arrive after the first lookup stored it and drop it
        // again; a later lookup keeps it.
        CHECK(co_await eventually([&]() -> asio::awaitable<bool> {
            REQUIRE(co_await ids.find_active_key(key->access_key_id));
            co_return lc.cache.find_key(key->access_key_id).has_value();
        }));

        // Connections to the database are refused, then the listener's session is ended: it cannot come
        // back, and the cache must stop serving what it holds.
        // (From another database: a session cannot disallow connections to its own.)
        auto admin = pg::make_pool(ex, {.conninfo = test::server_url()});
        co_await exec(*admin, "ALTER DATABASE \"" + db.name() + "\" ALLOW_CONNECTIONS false");
        co_await exec(*admin, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                              "WHERE application_name = 'depot-test-cache' AND datname = '" +
                                  db.name() + "'");
        CHECK(co_await eventually([&]() -> asio::awaitable<bool> { co_return !lc.cache.is_listening(); }));
        CHECK_FALSE(lc.cache.find_key(key->access_key_id));
        // Looked up meanwhile (from the database, through the pool's open connection): not stored.
        REQUIRE(co_await ids.find_active_key(key->access_key_id));
        CHECK_FALSE(lc.cache.find_key(key->access_key_id));

        co_await exec(*admin, "ALTER DATABASE \"" + db.name() + "\" ALLOW_CONNECTIONS true");
        admin.reset();
        CHECK(co_await eventually([&]() -> asio::awaitable<bool> { co_return lc.cache.is_listening(); }));
        REQUIRE(co_await ids.find_active_key(key->access_key_id));
        CHECK(lc.cache.find_key(key->access_key_id));
        pool.reset();
    });
}

// Issue 22 item 8: unknown access key ids are answered from memory for a while (a client sending them costs
// one query per id, not per request), and a key created later with that id, by another process, is found
// at once: schema 0014's trigger notifies inserts.
TEST_CASE("lookup cache: an unknown key id is remembered until a key with that id is created elsewhere")
{
    test::test_database db({.migrate = true});
    // Remembered far longer than the test waits: only the insert's notice can make the key visible.
    registry::lookup_cache cache({.negative_max_age = std::chrono::minutes(10)});
    std::atomic<bool> stopping{false};
    std::thread listener([&] {
        pg::listen_until(db.url(), "depot_cache", "depot-test-cache", "test cache", stopping,
                         {.connected = [&] { cache.listening(); },
                          .notified =
                              [&](const std::vector<std::string>& payloads) {
                                  for (const auto& p : payloads)
                                      cache.notified(p);
                              },
                          .disconnected = [&] { cache.not_listening(); }});
    });
    test::run([&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto pool = pg::make_pool(ex, {.conninfo = db.url()});
        REQUIRE(co_await eventually([&]() -> asio::awaitable<bool> { co_return cache.is_listening(); }));
        registry::identity_repository cached_ids(*pool, server_key, &cache);
        registry::identity_repository other_ids(*pool, server_key); // depotctl key create --access-key
        const registry::user alice{.id = "alice", .display_name = "Alice"}; // (not in co_await: GCC 12)
        REQUIRE(co_await other_ids.create_user(registry::system_audit_context(), alice));

        const std::string id = "DKCHOSENBYTHEOPERATOR";
        auto missing = co_await cached_ids.find_active_key(id);
        REQUIRE_FALSE(missing);
        CHECK(missing.error().code == errc::not_found);
        CHECK(cache.key_known_missing(id));
        auto created = co_await other_ids.create_key(registry::system_audit_context(), "alice", id,
                                                     "secret-of-the-chosen-key");
        REQUIRE(created);
        CHECK(co_await eventually([&]() -> asio::awaitable<bool> {
            auto k = co_await cached_ids.find_active_key(id);
            co_return k && k->secret == "secret-of-the-chosen-key";
        }));
        CHECK_FALSE(cache.key_known_missing(id));
        pool.reset();
    });
    stopping = true;
    listener.join();
}
