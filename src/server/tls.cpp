#include "server/tls.hpp"

#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace depot::server {
namespace {

namespace ssl = boost::asio::ssl;

// TLS 1.2 suites: ECDHE key exchange (forward secrecy) with AEAD ciphers only. TLS 1.3 suites are all
// AEAD and stay at OpenSSL's defaults.
constexpr const char* tls12_ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                                      "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
                                      "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

// ALPN wire format: length-prefixed protocol names. Depot speaks HTTP/1.1 only.
constexpr unsigned char alpn_http11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

int select_alpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
                unsigned int inlen, void*)
{
    unsigned char* selected = nullptr;
    if (SSL_select_next_proto(&selected, outlen, alpn_http11, sizeof alpn_http11, in, inlen) !=
        OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK; // no common protocol: carry on without ALPN rather than fail
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}

/// OpenSSL's queued errors as one line (and the queue emptied), or `fallback` when there are none.
std::string openssl_errors(std::string fallback)
{
    std::string out;
    while (unsigned long e = ERR_get_error()) {
        char buf[256];
        ERR_error_string_n(e, buf, sizeof buf);
        if (!out.empty())
            out += "; ";
        out += buf;
    }
    return out.empty() ? fallback : out;
}

std::string bio_text(BIO* bio)
{
    char* data = nullptr;
    long n = BIO_get_mem_data(bio, &data);
    return n > 0 ? std::string(data, static_cast<std::size_t>(n)) : std::string();
}

/// Opens the file once to report a missing or unreadable file in plain words before OpenSSL's codes.
result<void> check_readable(const std::string& path, const char* what)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f)
        return make_error(errc::invalid_argument,
                          std::string(what) + " " + path + ": " + std::strerror(errno));
    std::fclose(f);
    return {};
}

} // namespace

result<std::shared_ptr<ssl::context>> make_tls_context(const std::string& cert_file,
                                                       const std::string& key_file)
{
    if (auto r = check_readable(cert_file, "--tls-cert"); !r)
        return std::move(r).error();
    if (auto r = check_readable(key_file, "--tls-key"); !r)
        return std::move(r).error();
    ERR_clear_error();
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
    SSL_CTX* native = ctx->native_handle();
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_compression);
    SSL_CTX_set_options(native, SSL_OP_NO_RENEGOTIATION);
    if (SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1 ||
        SSL_CTX_set_cipher_list(native, tls12_ciphers) != 1)
        return make_error(errc::invalid_argument, "TLS settings refused: " + openssl_errors("unknown error"));
    SSL_CTX_set_alpn_select_cb(native, select_alpn, nullptr);

    boost::system::error_code ec;
    ctx->use_certificate_chain_file(cert_file, ec);
    if (ec)
        return make_error(errc::invalid_argument, "--tls-cert " + cert_file +
                                                      ": not a usable PEM certificate chain (" +
                                                      openssl_errors(ec.message()) + ")");
    ctx->use_private_key_file(key_file, ssl::context::pem, ec);
    if (ec) {
        // OpenSSL checks the key against the certificate as it loads it; Asio carries its error code.
        const bool mismatch =
            ec.category() == boost::asio::error::get_ssl_category() &&
            ERR_GET_LIB(static_cast<unsigned long>(ec.value())) == ERR_LIB_X509 &&
            ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == X509_R_KEY_VALUES_MISMATCH;
        auto reason = openssl_errors(ec.message());
        if (mismatch)
            return make_error(errc::invalid_argument, "--tls-key " + key_file +
                                                          " does not match the certificate in " + cert_file +
                                                          " (" + reason + ")");
        return make_error(errc::invalid_argument,
                          "--tls-key " + key_file + ": not a usable PEM private key (" + reason + ")");
    }
    if (SSL_CTX_check_private_key(native) != 1)
        return make_error(errc::invalid_argument, "--tls-key " + key_file +
                                                      " does not match the certificate in " + cert_file +
                                                      " (" + openssl_errors("key mismatch") + ")");
    return ctx;
}

tls_certificate_info certificate_info(ssl::context& ctx)
{
    tls_certificate_info info;
    X509* cert = SSL_CTX_get0_certificate(ctx.native_handle());
    if (!cert)
        return info;
    if (BIO* bio = BIO_new(BIO_s_mem())) {
        X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
        info.subject = bio_text(bio);
        BIO_free(bio);
    }
    if (BIO* bio = BIO_new(BIO_s_mem())) {
        ASN1_TIME_print(bio, X509_get0_notAfter(cert));
        info.not_after = bio_text(bio);
        BIO_free(bio);
    }
    if (BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr)) {
        if (char* hex = BN_bn2hex(bn)) {
            info.serial = hex;
            OPENSSL_free(hex);
        }
        BN_free(bn);
    }
    return info;
}

tls_context_store::tls_context_store(std::string cert_file, std::string key_file)
    : cert_file_(std::move(cert_file)), key_file_(std::move(key_file))
{
    auto ctx = make_tls_context(cert_file_, key_file_);
    if (!ctx)
        throw std::runtime_error(ctx.error().message);
    current_ = std::move(*ctx);
    info_ = certificate_info(*current_);
}

std::shared_ptr<ssl::context> tls_context_store::current() const
{
    std::lock_guard lock(mutex_);
    return current_;
}

result<tls_certificate_info> tls_context_store::reload()
{
    auto ctx = make_tls_context(cert_file_, key_file_);
    if (!ctx)
        return std::move(ctx).error();
    auto info = certificate_info(**ctx);
    std::lock_guard lock(mutex_);
    current_ = std::move(*ctx);
    info_ = info;
    return info;
}

tls_certificate_info tls_context_store::info() const
{
    std::lock_guard lock(mutex_);
    return info_;
}

} // namespace depot::server
