#include "common/hash.hpp"
#include "common/secret_box.hpp"

#include <doctest/doctest.h>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace depot;

namespace {

const std::string key = random_bytes(secret_box::key_size);

/// A fresh directory under the system temp dir, removed with its contents on destruction.
struct temp_dir
{
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("depot-secret-box-" + to_hex(random_bytes(8)));
    ~temp_dir() { std::filesystem::remove_all(path); }
};

std::string read_file(const std::filesystem::path& p)
{
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace

TEST_CASE("sealed secrets round-trip, including empty and binary values")
{
    for (std::string plain : {std::string("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"), std::string(),
                              std::string("\0\x01\xff binary", 10), std::string(10000, 'x')}) {
        auto sealed = secret_box::seal(key, plain);
        CHECK(sealed.size() == plain.size() + 29);
        CHECK(sealed[0] == 1);
        auto opened = secret_box::open(key, sealed);
        REQUIRE(opened.has_value());
        CHECK(*opened == plain);
    }
}

TEST_CASE("sealing the same secret twice gives different ciphertexts")
{
    CHECK(secret_box::seal(key, "same") != secret_box::seal(key, "same"));
}

TEST_CASE("any altered byte makes open fail")
{
    auto sealed = secret_box::seal(key, "a secret worth keeping");
    for (std::size_t i = 0; i < sealed.size(); ++i) {
        auto tampered = sealed;
        tampered[i] = static_cast<char>(tampered[i] ^ 0x01);
        auto opened = secret_box::open(key, tampered);
        REQUIRE_FALSE(opened.has_value());
        CHECK(opened.error().code == errc::invalid_argument);
    }
    CHECK_FALSE(secret_box::open(key, sealed.substr(0, sealed.size() - 1)).has_value());
    CHECK_FALSE(secret_box::open(key, sealed + "x").has_value());
    CHECK_FALSE(secret_box::open(key, "").has_value());
    CHECK_FALSE(secret_box::open(key, std::string(28, '\x01')).has_value());
}

TEST_CASE("a different key or different associated data cannot open a sealed secret")
{
    auto sealed = secret_box::seal(key, "secret", "AKIDEXAMPLE");
    CHECK(secret_box::open(key, sealed, "AKIDEXAMPLE").has_value());
    CHECK_FALSE(secret_box::open(random_bytes(32), sealed, "AKIDEXAMPLE").has_value());
    CHECK_FALSE(secret_box::open(key, sealed, "AKIDOTHER").has_value());
    CHECK_FALSE(secret_box::open(key, sealed).has_value());
}

TEST_CASE("keys of the wrong size are programming errors")
{
    CHECK_THROWS_AS(secret_box::seal("short", "x"), std::invalid_argument);
    CHECK_THROWS_AS((void)secret_box::open(std::string(33, 'k'), secret_box::seal(key, "x")),
                    std::invalid_argument);
}

TEST_CASE("parse_server_key accepts 64 hex characters and nothing else")
{
    auto hex = to_hex(key);
    CHECK(secret_box::parse_server_key(hex).value() == key);
    CHECK(secret_box::parse_server_key(" " + hex + "\n").value() == key);
    for (std::string bad :
         {std::string(), hex.substr(2), hex + "00", "zz" + hex.substr(2), std::string(64, ' ')}) {
        auto parsed = secret_box::parse_server_key(bad);
        REQUIRE_FALSE(parsed.has_value());
        CHECK(parsed.error().code == errc::invalid_argument);
    }
}

TEST_CASE("load_or_create_server_key creates a private key file once and then reads it back")
{
    temp_dir dir;
    auto path = dir.path / "nested" / "server.key";
    auto created = secret_box::load_or_create_server_key(path);
    CHECK(created.size() == 32);
    CHECK(read_file(path) == to_hex(created) + "\n");
    struct stat st
    {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    CHECK(secret_box::load_or_create_server_key(path) == created);
    // No temporary files are left next to the key.
    CHECK(std::distance(std::filesystem::directory_iterator(path.parent_path()), {}) == 1);
}

TEST_CASE("load_or_create_server_key refuses a file without a valid key")
{
    temp_dir dir;
    std::filesystem::create_directories(dir.path);
    auto path = dir.path / "server.key";
    std::ofstream(path) << "not a key\n";
    CHECK_THROWS_AS(secret_box::load_or_create_server_key(path), std::runtime_error);
}
