#pragma once
/// \file
/// The encrypted ("sealed") blob format of server-side encryption: AES-256-GCM (OpenSSL EVP) in fixed-size
/// segments, so a range read decrypts only the segments it covers and neither side ever holds a whole blob.
///
///     header   "DPS1" | secret_box::seal(wrapping key, data key (32) | nonce base (12))       = 77 bytes
///     segment  ciphertext of up to `segment_plain` plaintext bytes | tag (16)                    repeated
///
/// - The data key is 32 random bytes made for this one blob, wrapped with its nonce base (common/secret_box:
///   AES-256-GCM, random nonce, the magic as associated data) by the wrapping key: the server's SSE master
///   key (SSE-S3) or a key derived from the customer's key (SSE-C). A blob's data key never leaves it
///   unwrapped.
/// - Segment i (from 0) holds plaintext bytes [i * segment_plain, (i + 1) * segment_plain); every segment but
///   the last is full. Its nonce is the nonce base with the big-endian i XORed into its last 8 bytes (unique
///   per key: the key is unique per blob). Its associated data is the big-endian i (8 bytes) and a final flag
///   (1 byte, 1 on the last segment only), so reordering, dropping or truncating segments fails the tag.
/// - An empty blob is one final segment of no bytes (the tag alone), so it cannot be truncated either.
///
/// Thread-safe: only pure functions.

#include "common/result.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace depot::storage::sealed {

inline constexpr std::size_t segment_plain = 64 << 10;
inline constexpr std::size_t tag_size = 16;
inline constexpr std::size_t segment_sealed = segment_plain + tag_size;
inline constexpr std::size_t key_size = 32;
inline constexpr std::size_t nonce_size = 12;
inline constexpr std::size_t header_size = 4 + (1 + nonce_size + key_size + nonce_size + tag_size);

/// One blob's data key and nonce base, as the header wraps them.
struct blob_key
{
    std::array<unsigned char, key_size> key{};
    std::array<unsigned char, nonce_size> nonce_base{};
};

/// Bytes a blob of `plain` plaintext bytes takes sealed.
std::uint64_t sealed_size(std::uint64_t plain) noexcept;

/// The plaintext size of a sealed blob of `sealed` bytes; nullopt when no plaintext size seals to it.
std::optional<std::uint64_t> plain_size(std::uint64_t sealed) noexcept;

/// Segments of a blob of `plain` bytes (at least 1).
std::uint64_t segment_count(std::uint64_t plain) noexcept;

/// A fresh random data key and nonce base, and the header that wraps them under `wrapping_key` (32 bytes;
/// std::invalid_argument otherwise).
std::string make_header(std::string_view wrapping_key, blob_key& key);

/// Unwraps the data key of a header. invalid_argument when the header is malformed, tampered with or wrapped
/// under another key (deliberately indistinguishable).
result<blob_key> open_header(std::string_view wrapping_key, std::span<const std::byte> header);

/// Encrypts segment `index` (plain.size() <= segment_plain) into `out` (plain.size() + tag_size bytes).
void seal_segment(const blob_key& key, std::uint64_t index, bool final, std::span<const std::byte> plain,
                  std::span<std::byte> out);

/// Decrypts and authenticates segment `index` (sealed.size() in [tag_size, segment_sealed]) into `out`
/// (sealed.size() - tag_size bytes). invalid_argument when the tag does not verify.
result<void> open_segment(const blob_key& key, std::uint64_t index, bool final,
                          std::span<const std::byte> sealed, std::span<std::byte> out);

} // namespace depot::storage::sealed
