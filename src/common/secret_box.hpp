#pragma once
/// \file
/// Secrets at rest (S3 secret keys, webhook signing secrets): AES-256-GCM under one server key.
///
/// Sealed format: version byte (1) | 12-byte random nonce | ciphertext | 16-byte tag. The version byte and
/// the optional associated data are authenticated, so a sealed value cannot be moved to another row when the
/// row's identity (e.g. the access key id) is passed as associated data. Random 96-bit nonces are safe for
/// far more seals than a server key will ever see. All functions are thread-safe.

#include "common/result.hpp"

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace depot::secret_box {

/// Size of a server key in bytes.
inline constexpr std::size_t key_size = 32;

/// Encrypts `plaintext` under `key` (exactly 32 raw bytes). `associated_data` is authenticated, not stored:
/// `open` needs the same value. Throws std::invalid_argument on a key of the wrong size.
std::string seal(std::string_view key, std::string_view plaintext, std::string_view associated_data = {});

/// Decrypts a value produced by `seal`. Errors: invalid_argument when the value is truncated, has an unknown
/// version, was tampered with, or was sealed under another key or other associated data (these cases are
/// deliberately indistinguishable). Throws std::invalid_argument on a key of the wrong size.
result<std::string> open(std::string_view key, std::string_view sealed,
                         std::string_view associated_data = {});

/// Parses a server key given as 64 hex characters (e.g. DEPOT_SERVER_KEY); surrounding whitespace is ignored.
/// Returns the 32 raw bytes, or invalid_argument.
result<std::string> parse_server_key(std::string_view hex);

/// Reads the server key (64 hex characters) from `path`, or, when the file does not exist, creates it with a
/// fresh random key: parent directories are created, the file gets mode 0600 and appears atomically, so
/// concurrent starts agree on one key. Returns the 32 raw bytes. Throws std::runtime_error when the file
/// cannot be read or written or does not hold a valid key (a server must not start without its key).
std::string load_or_create_server_key(const std::filesystem::path& path);

} // namespace depot::secret_box
