// Console sessions (registry/repo/session_repository.hpp) on a real PostgreSQL: a session opened with an
// access key or an API token authenticates with its whole cookie only, ends when it expires, is revoked or
// its credential is, and the cleanup's purge deletes exactly the sessions that have ended.
#include "integration/test_db.hpp"
#include "registry/repo/audit.hpp"
#include "registry/repo/identity_repository.hpp"
#include "registry/repo/session_repository.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/repo/token_repository.hpp"

#include <boost/asio/this_coro.hpp>
#include <doctest/doctest.h>

using namespace depot;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

struct session_fixture
{
    test::test_database db{{.migrate = true}};
    std::shared_ptr<pg::pool> pool;
    std::unique_ptr<registry::identity_repository> ids;
    std::unique_ptr<registry::token_repository> tokens;
    std::unique_ptr<registry::session_repository> sessions;
    std::string key_id;

    asio::awaitable<void> start()
    {
        auto executor = co_await asio::this_coro::executor;
        pg::pool_options options{.conninfo = db.url()};
        pool = pg::make_pool(executor, options);
        ids = std::make_unique<registry::identity_repository>(*pool, std::string(32, 'k'));
        tokens = std::make_unique<registry::token_repository>(*pool);
        sessions = std::make_unique<registry::session_repository>(*pool);
        // A named user: GCC 12 mishandles a braced temporary passed to a coroutine by value.
        registry::user carol{.id = "carol", .display_name = "Carol"};
        REQUIRE(co_await ids->create_user(registry::system_audit_context(), carol));
        auto key = co_await ids->create_key(registry::system_audit_context(), "carol");
        REQUIRE(key);
        key_id = key->access_key_id;
    }

    asio::awaitable<void> stop()
    {
        sessions.reset();
        tokens.reset();
        ids.reset();
        pool.reset();
        co_return;
    }

    asio::awaitable<registry::console_session> open(registry::time_point expires)
    {
        auto s = co_await sessions->create(registry::system_audit_context(), "carol", key_id, "", expires);
        REQUIRE(s);
        co_return *s;
    }

    asio::awaitable<std::int64_t> rows()
    {
        auto conn = co_await pool->acquire();
        auto rs = co_await registry::sql(*conn, "SELECT count(*) FROM console_sessions");
        co_return rs[0].i64(0);
    }
};

registry::time_point in(std::chrono::seconds d)
{
    return std::chrono::system_clock::now() + d;
}

} // namespace

TEST_CASE("a session authenticates with its whole cookie and acts as its credential")
{
    session_fixture f;
    test::run([&]() -> asio::awaitable<void> {
        co_await f.start();
        auto s = co_await f.open(in(3600s));
        CHECK(s.cookie.starts_with("dps_" + s.id + "_"));
        CHECK(registry::session_id_of(s.cookie) == s.id);
        CHECK(s.csrf_token.size() == 32);
        auto found = co_await f.sessions->authenticate(s.cookie);
        REQUIRE(found);
        CHECK(found->id == s.id);
        CHECK(found->user_id == "carol");
        CHECK(found->user_display_name == "Carol");
        CHECK(found->credential == f.key_id);
        CHECK(found->csrf_token == s.csrf_token);
        CHECK(found->cookie.empty()); // the secret is never read back

        // the id alone, another secret, a malformed value: unknown
        std::string wrong = s.cookie;
        wrong.back() = wrong.back() == 'a' ? 'b' : 'a';
        for (const std::string& bad : {wrong, "dps_" + s.id, std::string("dps_"), s.cookie + "x",
                                       std::string(s.cookie).replace(0, 4, "dpt_"), std::string()}) {
            CAPTURE(bad);
            auto r = co_await f.sessions->authenticate(bad);
            REQUIRE_FALSE(r);
            CHECK(r.error().code == errc::not_found);
        }
        co_await f.stop();
    });
}

TEST_CASE("a session ends when it expires, is revoked, or its key or token is revoked")
{
    session_fixture f;
    test::run([&]() -> asio::awaitable<void> {
        co_await f.start();
        auto expired = co_await f.open(in(-1s));
        CHECK_FALSE(co_await f.sessions->authenticate(expired.cookie));

        auto signed_out = co_await f.open(in(3600s));
        REQUIRE(co_await f.sessions->revoke(registry::system_audit_context(), signed_out.id));
        CHECK_FALSE(co_await f.sessions->authenticate(signed_out.cookie));
        auto again = co_await f.sessions->revoke(registry::system_audit_context(), signed_out.id);
        REQUIRE_FALSE(again);
        CHECK(again.error().code == errc::not_found);

        auto with_key = co_await f.open(in(3600s));
        REQUIRE(co_await f.sessions->authenticate(with_key.cookie));
        REQUIRE(co_await f.ids->revoke_key(registry::system_audit_context(), f.key_id));
        CHECK_FALSE(co_await f.sessions->authenticate(with_key.cookie));

        auto token = co_await f.tokens->create(registry::system_audit_context(), "carol", "console");
        REQUIRE(token);
        auto with_token =
            co_await f.sessions->create(registry::system_audit_context(), "carol", "", token->id, in(3600s));
        REQUIRE(with_token);
        auto found = co_await f.sessions->authenticate(with_token->cookie);
        REQUIRE(found);
        CHECK(found->credential == "token:" + token->id);
        REQUIRE(co_await f.tokens->revoke(registry::system_audit_context(), token->id));
        CHECK_FALSE(co_await f.sessions->authenticate(with_token->cookie));
        co_await f.stop();
    });
}

TEST_CASE("the purge deletes the sessions that have ended and only those")
{
    session_fixture f;
    test::run([&]() -> asio::awaitable<void> {
        co_await f.start();
        auto live = co_await f.open(in(3600s));
        co_await f.open(in(-5s)); // expired
        auto signed_out = co_await f.open(in(3600s));
        REQUIRE(co_await f.sessions->revoke(registry::system_audit_context(), signed_out.id));
        CHECK(co_await f.rows() == 3);

        // nothing had ended an hour ago
        CHECK(co_await f.sessions->purge_ended(in(-3600s)) == 0);
        CHECK(co_await f.sessions->purge_ended(in(1s)) == 2);
        CHECK(co_await f.rows() == 1);
        auto still = co_await f.sessions->authenticate(live.cookie);
        REQUIRE(still);
        CHECK(still->id == live.id);
        CHECK(co_await f.sessions->purge_ended(in(1s)) == 0);
        co_await f.stop();
    });
}
