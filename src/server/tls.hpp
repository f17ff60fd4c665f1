#pragma once
/// \file
/// The TLS configuration of the listener: an OpenSSL server context built from a certificate chain file and
/// a private key file, and the holder that swaps in a freshly loaded context when the files are reloaded
/// (SIGHUP). New connections take the current context; a connection keeps the context it started with for
/// its whole life, so a reload never disturbs a connection in progress.

#include "common/result.hpp"

#include <memory>
#include <mutex>
#include <string>

namespace boost::asio::ssl {
class context;
} // namespace boost::asio::ssl

namespace depot::server {

/// What the loaded certificate says, for logs.
struct tls_certificate_info
{
    std::string subject;
    std::string serial; ///< hexadecimal
    std::string not_after;
};

/// Builds a TLS server context: TLS 1.2 and 1.3 only, forward-secret AEAD cipher suites for TLS 1.2
/// (OpenSSL's defaults for 1.3), no renegotiation, no compression, ALPN answering "http/1.1" when the
/// client offers it. `cert_file` is a PEM chain (the server certificate first, then intermediates);
/// `key_file` a PEM private key that must match the certificate.
/// Errors: invalid_argument with a message naming the file and OpenSSL's reason.
result<std::shared_ptr<boost::asio::ssl::context>> make_tls_context(const std::string& cert_file,
                                                                    const std::string& key_file);

/// The certificate a context serves.
tls_certificate_info certificate_info(boost::asio::ssl::context& ctx);

/// The current TLS context, replaceable at run time. Thread-safe.
class tls_context_store
{
public:
    /// Loads the files; throws std::runtime_error with the loader's message when they are unusable.
    tls_context_store(std::string cert_file, std::string key_file);

    /// The context new connections use. The pointer keeps it alive for as long as the connection needs it.
    std::shared_ptr<boost::asio::ssl::context> current() const;

    /// Loads the files again and, only if that succeeds, makes the result current. On failure the current
    /// context stays and the error says why. Reads the files synchronously (they are small).
    result<tls_certificate_info> reload();

    /// The certificate of the current context.
    tls_certificate_info info() const;

    const std::string& cert_file() const noexcept { return cert_file_; }

private:
    std::string cert_file_;
    std::string key_file_;
    mutable std::mutex mutex_;
    std::shared_ptr<boost::asio::ssl::context> current_;
    tls_certificate_info info_;
};

} // namespace depot::server
