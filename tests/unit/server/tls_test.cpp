#include "server/tls.hpp"

#include <boost/asio/ssl/context.hpp>
#include <cstdio>
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <memory>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <string>
#include <unistd.h>

using depot::server::make_tls_context;
using depot::server::tls_context_store;

namespace {

namespace fs = std::filesystem;

struct pkey_deleter
{
    void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct x509_deleter
{
    void operator()(X509* c) const { X509_free(c); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, pkey_deleter>;
using x509_ptr = std::unique_ptr<X509, x509_deleter>;

/// A scratch directory with a self-signed certificate and its key, written as PEM files.
struct cert_files
{
    fs::path dir = fs::temp_directory_path() / ("depot-tls-test-" + std::to_string(::getpid()));

    cert_files() { fs::create_directories(dir); }
    ~cert_files() { fs::remove_all(dir); }

    /// Writes `<name>.pem` and `<name>.key`: a P-256 key and a self-signed certificate with this serial.
    void make(const std::string& name, long serial)
    {
        pkey_ptr key(EVP_EC_gen("P-256"));
        REQUIRE(key);
        x509_ptr cert(X509_new());
        ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
        X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
        X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
        X509_set_pubkey(cert.get(), key.get());
        X509_NAME* subject = X509_get_subject_name(cert.get());
        X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                                   reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
        X509_set_issuer_name(cert.get(), subject);
        REQUIRE(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0);
        std::FILE* f = std::fopen(path(name + ".pem").c_str(), "w");
        REQUIRE(f);
        PEM_write_X509(f, cert.get());
        std::fclose(f);
        f = std::fopen(path(name + ".key").c_str(), "w");
        REQUIRE(f);
        PEM_write_PrivateKey(f, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
        std::fclose(f);
    }

    std::string path(const std::string& file) const { return (dir / file).string(); }

    void write(const std::string& file, const std::string& text) const { std::ofstream(dir / file) << text; }
};

} // namespace

TEST_CASE("a matching certificate and key make a TLS context that reports the certificate")
{
    cert_files files;
    files.make("server", 0x1234);
    auto ctx = make_tls_context(files.path("server.pem"), files.path("server.key"));
    REQUIRE(ctx);
    auto info = depot::server::certificate_info(**ctx);
    CHECK(info.serial == "1234");
    CHECK(info.subject == "CN=localhost");
    CHECK_FALSE(info.not_after.empty());
}

TEST_CASE("unusable TLS files are refused with a message naming the file")
{
    cert_files files;
    files.make("a", 1);
    files.make("b", 2);
    files.write("garbage.pem", "not PEM at all\n");

    auto missing = make_tls_context(files.path("missing.pem"), files.path("a.key"));
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message.find("--tls-cert") != std::string::npos);
    CHECK(missing.error().message.find("missing.pem") != std::string::npos);
    CHECK(missing.error().message.find("No such file") != std::string::npos);

    auto missing_key = make_tls_context(files.path("a.pem"), files.path("missing.key"));
    REQUIRE_FALSE(missing_key);
    CHECK(missing_key.error().message.find("--tls-key") != std::string::npos);

    auto bad_cert = make_tls_context(files.path("garbage.pem"), files.path("a.key"));
    REQUIRE_FALSE(bad_cert);
    CHECK(bad_cert.error().message.find("certificate") != std::string::npos);

    auto bad_key = make_tls_context(files.path("a.pem"), files.path("garbage.pem"));
    REQUIRE_FALSE(bad_key);
    CHECK(bad_key.error().message.find("private key") != std::string::npos);

    auto mismatch = make_tls_context(files.path("a.pem"), files.path("b.key"));
    REQUIRE_FALSE(mismatch);
    INFO(mismatch.error().message);
    CHECK(mismatch.error().message.find("does not match") != std::string::npos);

    CHECK_THROWS_AS(tls_context_store(files.path("a.pem"), files.path("b.key")), std::runtime_error);
}

TEST_CASE("a reload swaps the context only when the new files load")
{
    cert_files files;
    files.make("first", 1);
    files.make("second", 2);
    fs::copy_file(files.dir / "first.pem", files.dir / "live.pem");
    fs::copy_file(files.dir / "first.key", files.dir / "live.key");
    tls_context_store store(files.path("live.pem"), files.path("live.key"));
    auto original = store.current();
    CHECK(store.info().serial == "01");

    fs::copy_file(files.dir / "second.pem", files.dir / "live.pem", fs::copy_options::overwrite_existing);
    fs::copy_file(files.dir / "second.key", files.dir / "live.key", fs::copy_options::overwrite_existing);
    auto reloaded = store.reload();
    REQUIRE(reloaded);
    CHECK(reloaded->serial == "02");
    CHECK(store.current() != original);
    CHECK(depot::server::certificate_info(*original).serial == "01"); // still usable by its connections

    auto before_failure = store.current();
    files.write("live.pem", "half a file");
    auto failed = store.reload();
    REQUIRE_FALSE(failed);
    CHECK(store.current() == before_failure);
    CHECK(store.info().serial == "02");
}
