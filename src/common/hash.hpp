#pragma once
/// \file
/// Incremental digests (MD5 for ETags, SHA-1/SHA-256 for checksums and content identity), HMAC-SHA256 for
/// SigV4, and hex/base64 codecs. Backed by OpenSSL EVP. Hashers are not thread-safe; use one per stream.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace depot {

enum class digest_kind
{
    md5,
    sha1,
    sha256
};

/// Streaming digest over bytes. `finish()` may be called once; afterwards the hasher must be `reset()`.
class hasher
{
public:
    explicit hasher(digest_kind kind);
    ~hasher();
    hasher(hasher&&) noexcept;
    hasher& operator=(hasher&&) noexcept;

    void update(std::span<const std::byte> data);
    void update(std::string_view data) { update(std::as_bytes(std::span(data.data(), data.size()))); }
    /// Returns the raw digest (16, 20 or 32 bytes).
    std::string finish();
    void reset();
    digest_kind kind() const noexcept { return kind_; }

private:
    struct impl;
    std::unique_ptr<impl> impl_;
    digest_kind kind_;
};

/// One-shot digests returning raw bytes.
std::string md5(std::string_view data);
std::string sha1(std::string_view data);
std::string sha256(std::string_view data);
/// HMAC-SHA256 returning 32 raw bytes.
std::string hmac_sha256(std::string_view key, std::string_view data);

/// Lower-case hex of raw bytes.
std::string to_hex(std::string_view raw);
/// Decodes hex (either case); nullopt on odd length or a non-hex character.
std::optional<std::string> from_hex(std::string_view hex);
/// Standard base64 with padding.
std::string to_base64(std::string_view raw);
/// Decodes standard base64 (padding required); nullopt on malformed input.
std::optional<std::string> from_base64(std::string_view b64);

/// Cryptographically secure random bytes (OpenSSL RAND_bytes); throws on failure.
std::string random_bytes(std::size_t n);
/// n characters drawn uniformly from `alphabet` (at most 256 characters) with random_bytes: for the
/// random parts of credentials and session ids.
std::string random_text(std::string_view alphabet, std::size_t n);
/// Constant-time comparison for secrets and signatures.
bool constant_time_equal(std::string_view a, std::string_view b) noexcept;

} // namespace depot
