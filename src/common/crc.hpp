#pragma once
/// \file
/// The three CRCs S3 accepts as flexible checksums, all reflected with initial value and final XOR of all
/// ones:
///
/// | name        | polynomial (normal form) | check value of "123456789" |
/// |-------------|--------------------------|----------------------------|
/// | CRC-32      | 0x04C11DB7               | 0xCBF43926                 |
/// | CRC-32C     | 0x1EDC6F41               | 0xE3069283                 |
/// | CRC-64/NVME | 0xAD93D23594C93659       | 0xAE8B14860A799888         |
///
/// On x86-64 CPUs with PCLMULQDQ (checked at run time) the bulk of a buffer is folded with carry-less
/// multiplication, 512 bits per instruction where AVX-512 VPCLMULQDQ exists; elsewhere, and for inputs
/// under 128 bytes, a slice-by-8 table is used. All give identical results.
///
/// The functions chain like zlib's `crc32`: pass the CRC of everything before `data` (0 at the start) and get
/// the CRC of everything up to the end of `data`. All functions are pure and thread-safe.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace depot {

/// CRC-32 (IEEE 802.3, zlib, gzip) of `data`, continuing from `crc`.
std::uint32_t crc32(std::span<const std::byte> data, std::uint32_t crc = 0) noexcept;
/// CRC-32C (Castagnoli, iSCSI) of `data`, continuing from `crc`.
std::uint32_t crc32c(std::span<const std::byte> data, std::uint32_t crc = 0) noexcept;
/// CRC-64/NVME of `data`, continuing from `crc`.
std::uint64_t crc64nvme(std::span<const std::byte> data, std::uint64_t crc = 0) noexcept;

inline std::uint32_t crc32(std::string_view data, std::uint32_t crc = 0) noexcept
{
    return crc32(std::as_bytes(std::span(data.data(), data.size())), crc);
}
inline std::uint32_t crc32c(std::string_view data, std::uint32_t crc = 0) noexcept
{
    return crc32c(std::as_bytes(std::span(data.data(), data.size())), crc);
}
inline std::uint64_t crc64nvme(std::string_view data, std::uint64_t crc = 0) noexcept
{
    return crc64nvme(std::as_bytes(std::span(data.data(), data.size())), crc);
}

/// The CRC of A||B from crc(A), crc(B) and the length of B in bytes, in O(log len_b) time and without the
/// data. `combine(crc_a, crc(B), len_b) == crc(B, crc_a)` for every B.
std::uint32_t crc32_combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t len_b) noexcept;
std::uint32_t crc32c_combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t len_b) noexcept;
std::uint64_t crc64nvme_combine(std::uint64_t crc_a, std::uint64_t crc_b, std::uint64_t len_b) noexcept;

namespace crc_detail {

enum class crc_kind
{
    crc32,
    crc32c,
    crc64nvme
};

/// The implementations, exposed so that tests can compare every one this CPU has on the same input:
/// portable (slice-by-8 tables), pclmul (128-bit carry-less folding), vpclmul (the same, 512 bits wide).
enum class crc_path
{
    portable,
    pclmul,
    vpclmul
};

/// The CRC of `data` continuing from `crc` by `path` (inputs too short for a path use the next narrower
/// one). `path` must be `available()`.
std::uint64_t portable(crc_kind kind, std::span<const std::byte> data, std::uint64_t crc) noexcept;
std::uint64_t compute(crc_path path, crc_kind kind, std::span<const std::byte> data,
                      std::uint64_t crc) noexcept;
bool available(crc_path path) noexcept;

} // namespace crc_detail
} // namespace depot
