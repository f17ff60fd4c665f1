#include "test_db.hpp"

#include "registry/pg/migrations.hpp"

#include <atomic>
#include <boost/asio/this_coro.hpp>
#include <cstdio>
#include <cstdlib>
#include <doctest/doctest.h>
#include <random>
#include <unistd.h>

namespace depot::test {
namespace {

std::string unique_name(std::string_view kind)
{
    static std::atomic<unsigned> counter{0};
    std::random_device random;
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, "%08x", static_cast<unsigned>(random()));
    return "depot_" + std::string(kind) + "_" + std::to_string(::getpid()) + "_" + std::to_string(++counter) +
           "_" + suffix;
}

/// Runs statements that cannot run inside a transaction (CREATE/DROP DATABASE) on the server's own database.
void admin(std::string sql)
{
    run([&]() -> asio::awaitable<void> {
        auto conn = co_await pg::connect(co_await asio::this_coro::executor, server_url());
        co_await conn->execute(sql);
    });
}

void create_database(const std::string& name, const std::string& template_name = {})
{
    std::string sql = "CREATE DATABASE \"" + name + "\"";
    if (!template_name.empty())
        sql += " TEMPLATE \"" + template_name + "\"";
    admin(sql);
}

/// The migrated schema every `migrate = true` database is copied from; built on first use, dropped at exit.
class migrated_template
{
public:
    migrated_template() : name_(unique_name("template"))
    {
        create_database(name_);
        try {
            run([&]() -> asio::awaitable<void> {
                auto conn = co_await pg::connect(co_await asio::this_coro::executor,
                                                 with_database(server_url(), name_));
                co_await pg::migrate(*conn);
            });
        } catch (...) {
            drop();
            throw;
        }
    }
    ~migrated_template() { drop(); }
    migrated_template(const migrated_template&) = delete;
    migrated_template& operator=(const migrated_template&) = delete;
    const std::string& name() const noexcept { return name_; }

private:
    void drop() noexcept
    {
        try {
            admin("DROP DATABASE IF EXISTS \"" + name_ + "\" WITH (FORCE)");
        } catch (const std::exception& e) {
            std::fprintf(stderr, "test_db: could not drop %s: %s\n", name_.c_str(), e.what());
        }
    }
    std::string name_;
};

const migrated_template& template_database()
{
    static const migrated_template instance;
    return instance;
}

} // namespace

std::string server_url()
{
    const char* url = std::getenv("DEPOT_TEST_DATABASE_URL");
    if (!url || !*url) {
        FAIL("DEPOT_TEST_DATABASE_URL is not set: integration tests need a PostgreSQL server. Start one with "
             "`scripts/pg-dev start /tmp/depot-pg` and export DEPOT_TEST_DATABASE_URL=$(scripts/pg-dev url "
             "/tmp/depot-pg)");
    }
    return url;
}

std::string with_database(std::string_view url, std::string_view dbname)
{
    auto scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos) // key=value form: a repeated keyword overrides the earlier one
        return std::string(url) + " dbname=" + std::string(dbname);
    auto path = url.find_first_of("/?", scheme_end + 3);
    if (path == std::string_view::npos)
        return std::string(url) + "/" + std::string(dbname);
    auto query = url.find('?', path);
    std::string out(url.substr(0, path));
    out += "/";
    out += dbname;
    if (query != std::string_view::npos)
        out += url.substr(query);
    return out;
}

test_database::test_database(test_database_options options) : name_(unique_name("test"))
{
    create_database(name_, options.migrate ? template_database().name() : std::string());
    url_ = with_database(server_url(), name_);
}

test_database::~test_database()
{
    try {
        admin("DROP DATABASE IF EXISTS \"" + name_ + "\" WITH (FORCE)");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "test_db: could not drop %s: %s\n", name_.c_str(), e.what());
    }
}

const test_database& shared_database()
{
    static const test_database instance({.migrate = true});
    return instance;
}

asio::awaitable<std::unique_ptr<pg::connection>> connect(const test_database& db)
{
    co_return co_await pg::connect(co_await asio::this_coro::executor, db.url());
}

} // namespace depot::test
