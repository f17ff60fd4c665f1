#include "server/options.hpp"

#include <cstdlib>
#include <doctest/doctest.h>

using depot::server::parse_options;

TEST_CASE("flags override environment variables which override defaults")
{
    ::setenv("DEPOT_DATABASE_URL", "postgresql://env/db", 1);
    ::setenv("DEPOT_LISTEN", "127.0.0.1:7000", 1);
    ::setenv("DEPOT_REGION", "eu-west-1", 1);
    bool help = false;
    auto o = parse_options({"--listen", "0.0.0.0:8000", "--storage=memory"}, help);
    REQUIRE(o);
    CHECK_FALSE(help);
    CHECK(o->listen == "0.0.0.0:8000");
    CHECK(o->storage == "memory");
    CHECK(o->region == "eu-west-1");
    CHECK(o->database_url == "postgresql://env/db");
    CHECK(o->blob_dir == "./var/blobs");
    ::unsetenv("DEPOT_LISTEN");
    ::unsetenv("DEPOT_REGION");
    ::unsetenv("DEPOT_DATABASE_URL");
}

TEST_CASE("bad options are refused with a message naming them")
{
    ::setenv("DEPOT_DATABASE_URL", "postgresql://env/db", 1);
    bool help = false;
    auto unknown = parse_options({"--nope", "1"}, help);
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().message.find("--nope") != std::string::npos);
    auto bad_store = parse_options({"--storage", "tape"}, help);
    REQUIRE_FALSE(bad_store);
    CHECK(bad_store.error().message.find("--storage") != std::string::npos);
    auto missing_value = parse_options({"--listen"}, help);
    CHECK_FALSE(missing_value);
    ::unsetenv("DEPOT_DATABASE_URL");
    auto no_db = parse_options({}, help);
    REQUIRE_FALSE(no_db);
    CHECK(no_db.error().message.find("DEPOT_DATABASE_URL") != std::string::npos);
}

TEST_CASE("help is recognised before validation")
{
    bool help = false;
    auto o = parse_options({"--help"}, help);
    CHECK(help);
    CHECK(depot::server::options_help().find("DEPOT_STORAGE") != std::string::npos);
}
