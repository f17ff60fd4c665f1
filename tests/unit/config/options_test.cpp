#include "config/options.hpp"

#include <cstdlib>
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using depot::config::parse_options;

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
    CHECK(depot::config::options_help().find("DEPOT_STORAGE") != std::string::npos);
}

TEST_CASE("TLS needs both a certificate and a key, from flags or the environment")
{
    ::setenv("DEPOT_DATABASE_URL", "postgresql://env/db", 1);
    bool help = false;
    auto plain = parse_options({}, help);
    REQUIRE(plain);
    CHECK(plain->tls_cert_file.empty());
    CHECK(plain->tls_key_file.empty());

    auto both = parse_options({"--tls-cert", "/etc/depot/cert.pem", "--tls-key=/etc/depot/key.pem"}, help);
    REQUIRE(both);
    CHECK(both->tls_cert_file == "/etc/depot/cert.pem");
    CHECK(both->tls_key_file == "/etc/depot/key.pem");

    auto cert_only = parse_options({"--tls-cert", "/etc/depot/cert.pem"}, help);
    REQUIRE_FALSE(cert_only);
    CHECK(cert_only.error().message.find("--tls-key") != std::string::npos);

    ::setenv("DEPOT_TLS_CERT", "/env/cert.pem", 1);
    ::setenv("DEPOT_TLS_KEY", "/env/key.pem", 1);
    auto from_env = parse_options({"--tls-key", "/flag/key.pem"}, help);
    REQUIRE(from_env);
    CHECK(from_env->tls_cert_file == "/env/cert.pem");
    CHECK(from_env->tls_key_file == "/flag/key.pem");
    ::unsetenv("DEPOT_TLS_KEY");
    auto key_missing = parse_options({}, help);
    REQUIRE_FALSE(key_missing);
    ::unsetenv("DEPOT_TLS_CERT");
    ::unsetenv("DEPOT_DATABASE_URL");
}

TEST_CASE("request limits have defaults and refuse nonsense")
{
    ::setenv("DEPOT_DATABASE_URL", "postgresql://env/db", 1);
    bool help = false;
    auto defaults = parse_options({}, help);
    REQUIRE(defaults);
    CHECK(defaults->max_connections == 4096);
    CHECK(defaults->max_header_bytes == 16 * 1024);
    CHECK(defaults->max_xml_body_bytes == 2 * 1024 * 1024);

    ::setenv("DEPOT_MAX_CONNECTIONS", "64", 1);
    auto set = parse_options({"--max-header-bytes", "8192", "--max-xml-body-bytes=4096"}, help);
    REQUIRE(set);
    CHECK(set->max_connections == 64);
    CHECK(set->max_header_bytes == 8192);
    CHECK(set->max_xml_body_bytes == 4096);
    ::unsetenv("DEPOT_MAX_CONNECTIONS");

    for (auto bad : std::vector<std::vector<std::string>>{{"--max-connections", "0"},
                                                          {"--max-connections", "-1"},
                                                          {"--max-connections", "many"},
                                                          {"--max-header-bytes", "100"},
                                                          {"--max-header-bytes", "1000000000"},
                                                          {"--max-xml-body-bytes", "10"}}) {
        auto refused = parse_options(bad, help);
        REQUIRE_FALSE(refused);
        CHECK(refused.error().message.find(bad[0]) != std::string::npos);
    }
    ::unsetenv("DEPOT_DATABASE_URL");
}

TEST_CASE("the read cache and warm-up settings have defaults and refuse nonsense")
{
    ::setenv("DEPOT_DATABASE_URL", "postgresql://env/db", 1);
    bool help = false;
    auto d = parse_options({}, help);
    REQUIRE(d);
    CHECK(d->cache_memory_bytes == 0);
    CHECK(d->cache_disk_bytes == 0);
    CHECK(d->instance_id.empty());
    CHECK(d->warmup_concurrency == 4);
    auto o = parse_options({"--cache-memory-bytes", "1048576", "--cache-dir", "/tmp/c", "--cache-disk-bytes",
                            "4096", "--instance-id", "pod-1", "--warmup-poll-interval", "250"},
                           help);
    REQUIRE(o);
    CHECK(o->cache_memory_bytes == 1048576);
    CHECK(o->cache_dir == "/tmp/c");
    CHECK(o->cache_disk_bytes == 4096);
    CHECK(o->instance_id == "pod-1");
    CHECK(o->warmup_poll_interval == std::chrono::milliseconds(250));
    auto no_dir = parse_options({"--cache-disk-bytes", "4096"}, help);
    REQUIRE_FALSE(no_dir);
    CHECK(no_dir.error().message.find("--cache-dir") != std::string::npos);
    CHECK_FALSE(parse_options({"--cache-memory-bytes", "-1"}, help));
    CHECK_FALSE(parse_options({"--instance-id", ""}, help));
    CHECK_FALSE(parse_options({"--warmup-concurrency", "0"}, help));
    ::unsetenv("DEPOT_DATABASE_URL");
}

TEST_CASE("the console directory must hold index.html, from the flag or the environment")
{
    ::setenv("DEPOT_DATABASE_URL", "postgresql://env/db", 1);
    bool help = false;
    auto d = parse_options({}, help);
    REQUIRE(d);
    CHECK(d->ui_dir.empty());
    const auto dir = std::filesystem::temp_directory_path() / ("depot-ui-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    auto empty = parse_options({"--ui-dir", dir.string()}, help);
    REQUIRE_FALSE(empty);
    CHECK(empty.error().message.find("--ui-dir") != std::string::npos);
    CHECK_FALSE(parse_options({"--ui-dir", ""}, help));
    std::ofstream(dir / "index.html") << "<!doctype html>";
    auto o = parse_options({"--ui-dir", dir.string()}, help);
    REQUIRE(o);
    CHECK(o->ui_dir == dir.string());
    ::setenv("DEPOT_UI_DIR", dir.string().c_str(), 1);
    auto env = parse_options({}, help);
    REQUIRE(env);
    CHECK(env->ui_dir == dir.string());
    ::unsetenv("DEPOT_UI_DIR");
    std::filesystem::remove_all(dir);
    ::unsetenv("DEPOT_DATABASE_URL");
}

TEST_CASE("audit retention is off by default and needs both a retention and a bucket")
{
    ::setenv("DEPOT_DATABASE_URL", "postgresql://env/db", 1);
    bool help = false;
    auto d = parse_options({}, help);
    REQUIRE(d);
    CHECK(d->audit_retention.count() == 0);
    CHECK(d->audit_archive_bucket.empty());
    auto o = parse_options({"--audit-retention", "7776000", "--audit-archive-bucket", "audit-archive"}, help);
    REQUIRE(o);
    CHECK(o->audit_retention == std::chrono::seconds(7776000));
    CHECK(o->audit_archive_bucket == "audit-archive");
    for (const auto& half : {std::vector<std::string>{"--audit-retention", "60"},
                             std::vector<std::string>{"--audit-archive-bucket", "audit-archive"}}) {
        auto r = parse_options(half, help);
        REQUIRE_FALSE(r);
        CHECK(r.error().message.find("--audit-retention and --audit-archive-bucket") != std::string::npos);
    }
    CHECK_FALSE(parse_options({"--audit-retention", "-1", "--audit-archive-bucket", "audit-archive"}, help));
    CHECK_FALSE(parse_options({"--audit-retention", "60", "--audit-archive-bucket", "Not_A_Bucket"}, help));
    ::unsetenv("DEPOT_DATABASE_URL");
}

TEST_CASE("the per-address limits are on by default and can be set or turned off")
{
    ::setenv("DEPOT_DATABASE_URL", "postgresql://env/db", 1);
    bool help = false;
    auto d = parse_options({}, help);
    REQUIRE(d);
    CHECK(d->max_connections_per_address == 256);
    CHECK(d->auth_failure_limit == 20);
    CHECK(d->auth_failure_window == std::chrono::seconds(60));
    CHECK(d->auth_failure_cooldown == std::chrono::seconds(60));
    auto o = parse_options({"--max-connections-per-address", "0", "--auth-failure-limit", "5",
                            "--auth-failure-window", "10", "--auth-failure-cooldown", "3"},
                           help);
    REQUIRE(o);
    CHECK(o->max_connections_per_address == 0);
    CHECK(o->auth_failure_limit == 5);
    CHECK(o->auth_failure_window == std::chrono::seconds(10));
    CHECK(o->auth_failure_cooldown == std::chrono::seconds(3));
    CHECK_FALSE(parse_options({"--auth-failure-limit", "-1"}, help));
    CHECK_FALSE(parse_options({"--auth-failure-cooldown", "0"}, help));
    ::unsetenv("DEPOT_DATABASE_URL");
}

namespace {

std::string write_config(const std::string& name, const std::string& text)
{
    auto path = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".conf");
    std::ofstream(path) << text;
    return path.string();
}

} // namespace

TEST_CASE("a configuration file sets every flag by name, below flags and environment variables")
{
    auto file = write_config("depotd-options", "# comment\n; comment\n\nlisten = 0.0.0.0:1234\n"
                                               "database-url = postgresql://u@h/db?password=a#b\n"
                                               "region=eu-1\nwebhook-allow-private = true\n");
    bool help = false;
    auto o = parse_options({"--config", file}, help);
    REQUIRE(o);
    CHECK(o->listen == "0.0.0.0:1234");
    CHECK(o->database_url == "postgresql://u@h/db?password=a#b"); // '#' inside a value is kept
    CHECK(o->region == "eu-1");
    CHECK(o->webhook_allow_private);
    ::setenv("DEPOT_REGION", "env-1", 1);
    o = parse_options({"--config=" + file, "--listen", "127.0.0.1:1"}, help);
    REQUIRE(o);
    CHECK(o->listen == "127.0.0.1:1");
    CHECK(o->region == "env-1");
    ::unsetenv("DEPOT_REGION");
    ::setenv("DEPOT_CONFIG", file.c_str(), 1);
    o = parse_options({}, help);
    REQUIRE(o);
    CHECK(o->listen == "0.0.0.0:1234");
    ::unsetenv("DEPOT_CONFIG");
    std::filesystem::remove(file);
}

TEST_CASE("a configuration file with an unknown key, a bad line or a bad value names the file and line")
{
    bool help = false;
    auto file = write_config("depotd-unknown", "database-url = x\n# listen, misspelt\n\nlisen = 1\n");
    auto unknown = parse_options({"--config", file}, help);
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().message.find(file + ":4") != std::string::npos);
    CHECK(unknown.error().message.find("'lisen'") != std::string::npos);
    std::filesystem::remove(file);
    file = write_config("depotd-bad", "database-url = x\nregion\n");
    auto bad = parse_options({"--config", file}, help);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find(file + ":2") != std::string::npos);
    std::filesystem::remove(file);
    file = write_config("depotd-value", "database-url = x\nstorage = tape\n");
    auto value = parse_options({"--config", file}, help);
    REQUIRE_FALSE(value);
    CHECK(value.error().message.find(file + ":2: storage") != std::string::npos);
    std::filesystem::remove(file);
    auto missing = parse_options({"--config", "/nonexistent/depotd.conf"}, help);
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message.find("/nonexistent/depotd.conf") != std::string::npos);
}

TEST_CASE("the console listens apart from S3 by default: --listen's host, the next port")
{
    using depot::config::console_address;
    bool help = false;
    auto o = parse_options({"--database-url", "postgresql://x/db"}, help);
    REQUIRE(o);
    CHECK(console_address(*o) == "127.0.0.1:9001");
    o = parse_options({"--database-url", "postgresql://x/db", "--listen", "0.0.0.0:8000"}, help);
    REQUIRE(o);
    CHECK(console_address(*o) == "0.0.0.0:8001");
    // any free port for both
    o = parse_options({"--database-url", "postgresql://x/db", "--listen", "127.0.0.1:0"}, help);
    REQUIRE(o);
    CHECK(console_address(*o) == "127.0.0.1:0");
    for (const char* given : {"127.0.0.1:7001", "[::1]:7001", "off", "shared", "0.0.0.0:0"}) {
        CAPTURE(given);
        o = parse_options({"--database-url", "postgresql://x/db", "--console-listen", given}, help);
        REQUIRE(o);
        CHECK(console_address(*o) == given);
    }
    for (const char* bad : {"", "7001", ":7001", "host:", "host:70000", "host:-1", "on", "127.0.0.1:9000"}) {
        CAPTURE(bad);
        auto refused = parse_options({"--database-url", "postgresql://x/db", "--console-listen", bad}, help);
        REQUIRE_FALSE(refused);
        CHECK(refused.error().message.find("console-listen") != std::string::npos);
    }
}
