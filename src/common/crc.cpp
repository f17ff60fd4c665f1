#include "common/crc.hpp"

#include <array>
#include <bit>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DEPOT_CRC_PCLMUL 1
#include <immintrin.h>
#else
#define DEPOT_CRC_PCLMUL 0
#endif

// All three CRCs are "reflected": the first bit of the message is the least significant bit of its first
// byte, and a W-bit register holds the coefficient of x^i in bit W-1-i. In that representation,
// multiplying by x is a right shift, and the register update for one byte is the usual table lookup.
//
// Every function below works on the raw register (no initial or final inversion); the public functions
// apply the all-ones init and xorout, which is what makes them chain like zlib's crc32().

namespace depot {
namespace {

template <class T, T Poly>
struct crc_model
{
    using value_type = T;
    static constexpr int width = static_cast<int>(sizeof(T) * 8);
    static constexpr T poly = Poly; ///< bit-reversed generator polynomial, x^W term omitted
};

using crc32_model = crc_model<std::uint32_t, 0xEDB88320u>;
using crc32c_model = crc_model<std::uint32_t, 0x82F63B78u>;
using crc64nvme_model = crc_model<std::uint64_t, 0x9A6C9329AC4BC9B5u>;

// ---- polynomial arithmetic modulo P, used for combination and for the folding constants ----

/// a(x) * b(x) mod P(x), both reflected.
template <class M>
constexpr typename M::value_type multiply_mod(typename M::value_type a, typename M::value_type b) noexcept
{
    using T = typename M::value_type;
    T product = 0;
    // Walk a's coefficients from x^0 (the top bit) to x^(W-1) while b is multiplied by x at each step.
    // Branch-free: the bits are data, and mispredictions would dominate.
    for (int i = M::width - 1; i >= 0; --i) {
        product ^= b & static_cast<T>(T(0) - ((a >> i) & 1));
        b = static_cast<T>((b >> 1) ^ (M::poly & static_cast<T>(T(0) - (b & 1))));
    }
    return product;
}

/// x^n mod P(x), reflected.
template <class M>
constexpr typename M::value_type x_to_the(std::uint64_t n) noexcept
{
    using T = typename M::value_type;
    T result = T(1) << (M::width - 1); // 1
    T square = T(1) << (M::width - 2); // x
    for (; n != 0; n >>= 1) {
        if (n & 1)
            result = multiply_mod<M>(result, square);
        square = multiply_mod<M>(square, square);
    }
    return result;
}

/// x^(8 * 2^k) mod P for k = 0..63: appending 2^k zero bytes multiplies the register by entry k.
template <class M>
constexpr std::array<typename M::value_type, 64> make_zero_byte_powers() noexcept
{
    std::array<typename M::value_type, 64> powers{};
    powers[0] = x_to_the<M>(8);
    for (std::size_t k = 1; k < powers.size(); ++k)
        powers[k] = multiply_mod<M>(powers[k - 1], powers[k - 1]);
    return powers;
}

template <class M>
constexpr auto zero_byte_powers = make_zero_byte_powers<M>();

template <class M>
typename M::value_type combine(typename M::value_type crc_a, typename M::value_type crc_b,
                               std::uint64_t len_b) noexcept
{
    // With init = xorout = all ones, the inversions cancel: crc(A||B) = crc(A) * x^(8 len B) + crc(B).
    for (std::size_t k = 0; len_b != 0; ++k, len_b >>= 1) {
        if (len_b & 1)
            crc_a = multiply_mod<M>(crc_a, zero_byte_powers<M>[k]);
    }
    return crc_a ^ crc_b;
}

// ---- slice-by-8 tables: the portable path, and the tail of the accelerated one ----

template <class M>
constexpr std::array<std::array<typename M::value_type, 256>, 8> make_tables() noexcept
{
    using T = typename M::value_type;
    std::array<std::array<T, 256>, 8> tables{};
    for (unsigned n = 0; n < 256; ++n) {
        T reg = static_cast<T>(n);
        for (int bit = 0; bit < 8; ++bit)
            reg = (reg & 1) ? static_cast<T>((reg >> 1) ^ M::poly) : static_cast<T>(reg >> 1);
        tables[0][n] = reg;
    }
    // tables[k][n]: the register after byte n followed by k zero bytes.
    for (std::size_t k = 1; k < tables.size(); ++k) {
        for (unsigned n = 0; n < 256; ++n) {
            T prev = tables[k - 1][n];
            tables[k][n] = static_cast<T>(prev >> 8) ^ tables[0][prev & 0xff];
        }
    }
    return tables;
}

template <class M>
constexpr auto tables = make_tables<M>();

inline std::uint64_t load_le64(const unsigned char* p) noexcept
{
    std::uint64_t v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (std::endian::native == std::endian::big)
        v = __builtin_bswap64(v);
    return v;
}

template <class M>
typename M::value_type table_update(typename M::value_type reg, const unsigned char* p,
                                    std::size_t n) noexcept
{
    using T = typename M::value_type;
    const auto& t = tables<M>;
    for (; n >= 8; p += 8, n -= 8) {
        // The register overlaps the first W/8 of the 8 bytes; the rest is data only.
        std::uint64_t v = load_le64(p) ^ reg;
        reg = t[7][v & 0xff] ^ t[6][(v >> 8) & 0xff] ^ t[5][(v >> 16) & 0xff] ^ t[4][(v >> 24) & 0xff] ^
              t[3][(v >> 32) & 0xff] ^ t[2][(v >> 40) & 0xff] ^ t[1][(v >> 48) & 0xff] ^ t[0][v >> 56];
    }
    for (; n != 0; ++p, --n)
        reg = t[0][(reg ^ *p) & 0xff] ^ static_cast<T>(reg >> 8);
    return reg;
}

// ---- carry-less multiplication folding (x86-64 PCLMULQDQ) ----
//
// The message is read as 128-bit little-endian blocks; in a block register, bit k holds the coefficient of
// x^(127-k) relative to the block's end. A block X = H*x^64 + L (H in the low half, L in the high half)
// moved D bits further down the message is X*x^D = H*x^(64+D) + L*x^D, congruent modulo P to
// H*(x^(64+D) mod P) + L*(x^D mod P): two carry-less 64x64 products, whose sum is at most 128 bits wide and
// can be XORed into the block D bits later. PCLMULQDQ on reflected operands yields the product shifted
// one bit towards x^0, so the constants are taken one power lower: x^(64+D-1) and x^(D-1).
//
// Four lanes fold 64 bytes per iteration to hide the multiplier's latency; they are then merged into one
// lane, which absorbs the remaining whole blocks. The last block plus the sub-block tail go through the
// table code starting from a zero register, which yields exactly (folded value * x^W) mod P.

#if DEPOT_CRC_PCLMUL

/// A folding constant in the 64-bit reflected layout PCLMULQDQ expects (coefficient of x^i in bit 63-i).
template <class M>
constexpr std::uint64_t fold_key(std::uint64_t exponent) noexcept
{
    return static_cast<std::uint64_t>(x_to_the<M>(exponent)) << (64 - M::width);
}

template <class M, unsigned Distance>
struct fold_distance
{
    static constexpr std::uint64_t high_half_key = fold_key<M>(64 + Distance - 1);
    static constexpr std::uint64_t low_half_key = fold_key<M>(Distance - 1);
};

template <class M, unsigned Distance>
__attribute__((target("pclmul,sse2"))) inline __m128i keys() noexcept
{
    using d = fold_distance<M, Distance>;
    return _mm_set_epi64x(static_cast<long long>(d::low_half_key), static_cast<long long>(d::high_half_key));
}

__attribute__((target("pclmul,sse2"))) inline __m128i fold(__m128i x, __m128i keys) noexcept
{
    return _mm_xor_si128(_mm_clmulepi64_si128(x, keys, 0x00), _mm_clmulepi64_si128(x, keys, 0x11));
}

__attribute__((target("sse2"))) inline __m128i load_block(const unsigned char* p) noexcept
{
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

constexpr std::size_t min_pclmul_length = 128;

/// Requires n >= 64.
template <class M>
__attribute__((target("pclmul,sse2"))) typename M::value_type
pclmul_update(typename M::value_type reg, const unsigned char* p, std::size_t n) noexcept
{
    __m128i x0 = _mm_xor_si128(load_block(p), _mm_cvtsi64_si128(static_cast<long long>(reg)));
    __m128i x1 = load_block(p + 16);
    __m128i x2 = load_block(p + 32);
    __m128i x3 = load_block(p + 48);
    p += 64;
    n -= 64;

    const __m128i k512 = keys<M, 512>();
    for (; n >= 64; p += 64, n -= 64) {
        x0 = _mm_xor_si128(fold(x0, k512), load_block(p));
        x1 = _mm_xor_si128(fold(x1, k512), load_block(p + 16));
        x2 = _mm_xor_si128(fold(x2, k512), load_block(p + 32));
        x3 = _mm_xor_si128(fold(x3, k512), load_block(p + 48));
    }

    const __m128i k128 = keys<M, 128>();
    __m128i x = _mm_xor_si128(_mm_xor_si128(fold(x0, keys<M, 384>()), fold(x1, keys<M, 256>())),
                              _mm_xor_si128(fold(x2, k128), x3));
    for (; n >= 16; p += 16, n -= 16)
        x = _mm_xor_si128(fold(x, k128), load_block(p));

    alignas(16) unsigned char last[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(last), x);
    return table_update<M>(table_update<M>(0, last, sizeof last), p, n);
}

bool cpu_has_pclmul() noexcept
{
    static const bool has = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("pclmul") != 0;
    }();
    return has;
}

// The same folding, four 128-bit lanes per instruction (AVX-512 VPCLMULQDQ: Ice Lake and Zen 4 on): four
// 512-bit accumulators take 256 bytes per round, each lane folded across 2048 bits with the same keys as
// above, then the sixteen lanes are folded into one and finished by the 128-bit loop. About four times the
// 128-bit path's throughput on the CPUs that have it (`depot-hash-bench`, tools/bench/hash_bench.cpp).
constexpr std::size_t min_vpclmul_length = 512;

/// keys<M, Distance>() in each 128-bit lane. Spelled out: GCC 12's _mm512_broadcast_i32x4 trips
/// -Wuninitialized in its own header, like _mm512_extracti32x4_epi32 below.
template <class M, unsigned Distance>
__attribute__((target("avx512f,vpclmulqdq"))) inline __m512i keys512() noexcept
{
    using d = fold_distance<M, Distance>;
    return _mm512_set_epi64(static_cast<long long>(d::low_half_key), static_cast<long long>(d::high_half_key),
                            static_cast<long long>(d::low_half_key), static_cast<long long>(d::high_half_key),
                            static_cast<long long>(d::low_half_key), static_cast<long long>(d::high_half_key),
                            static_cast<long long>(d::low_half_key),
                            static_cast<long long>(d::high_half_key));
}

__attribute__((target("avx512f,vpclmulqdq"))) inline __m512i fold512(__m512i x, __m512i keys) noexcept
{
    return _mm512_xor_si512(_mm512_clmulepi64_epi128(x, keys, 0x00), _mm512_clmulepi64_epi128(x, keys, 0x11));
}

__attribute__((target("avx512f"))) inline __m512i load_block512(const unsigned char* p) noexcept
{
    return _mm512_loadu_si512(p);
}

template <class M>
__attribute__((target("avx512f,vpclmulqdq,pclmul,sse2"))) typename M::value_type
vpclmul_update(typename M::value_type reg, const unsigned char* p, std::size_t n) noexcept
{
    __m512i z0 = _mm512_xor_si512(load_block512(p),
                                  _mm512_zextsi128_si512(_mm_cvtsi64_si128(static_cast<long long>(reg))));
    __m512i z1 = load_block512(p + 64);
    __m512i z2 = load_block512(p + 128);
    __m512i z3 = load_block512(p + 192);
    p += 256;
    n -= 256;

    const __m512i k2048 = keys512<M, 2048>();
    for (; n >= 256; p += 256, n -= 256) {
        z0 = _mm512_xor_si512(fold512(z0, k2048), load_block512(p));
        z1 = _mm512_xor_si512(fold512(z1, k2048), load_block512(p + 64));
        z2 = _mm512_xor_si512(fold512(z2, k2048), load_block512(p + 128));
        z3 = _mm512_xor_si512(fold512(z3, k2048), load_block512(p + 192));
    }
    // Four accumulators into one (each lane of z0 lies 1536 bits before the same lane of z3), then its four
    // lanes into one 128-bit value, as the 128-bit path ends its own loop.
    const __m512i z =
        _mm512_xor_si512(_mm512_xor_si512(fold512(z0, keys512<M, 1536>()), fold512(z1, keys512<M, 1024>())),
                         _mm512_xor_si512(fold512(z2, keys512<M, 512>()), z3));
    // (Through memory: GCC 12's _mm512_extracti32x4_epi32 trips -Wuninitialized in its own header.)
    alignas(64) __m128i lanes[4];
    _mm512_store_si512(lanes, z);
    const __m128i k128 = keys<M, 128>();
    __m128i x = _mm_xor_si128(_mm_xor_si128(fold(lanes[0], keys<M, 384>()), fold(lanes[1], keys<M, 256>())),
                              _mm_xor_si128(fold(lanes[2], k128), lanes[3]));
    for (; n >= 16; p += 16, n -= 16)
        x = _mm_xor_si128(fold(x, k128), load_block(p));

    alignas(16) unsigned char last[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(last), x);
    return table_update<M>(table_update<M>(0, last, sizeof last), p, n);
}

bool cpu_has_vpclmul() noexcept
{
    static const bool has = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("vpclmulqdq") != 0 &&
               cpu_has_pclmul();
    }();
    return has;
}

#endif // DEPOT_CRC_PCLMUL

template <class M>
typename M::value_type update(typename M::value_type reg, std::span<const std::byte> data) noexcept
{
    auto p = reinterpret_cast<const unsigned char*>(data.data());
#if DEPOT_CRC_PCLMUL
    if (data.size() >= min_vpclmul_length && cpu_has_vpclmul())
        return vpclmul_update<M>(reg, p, data.size());
    if (data.size() >= min_pclmul_length && cpu_has_pclmul())
        return pclmul_update<M>(reg, p, data.size());
#endif
    return table_update<M>(reg, p, data.size());
}

template <class M>
typename M::value_type portable_crc(std::span<const std::byte> data, typename M::value_type crc) noexcept
{
    auto p = reinterpret_cast<const unsigned char*>(data.data());
    return static_cast<typename M::value_type>(~table_update<M>(~crc, p, data.size()));
}

template <class M>
typename M::value_type accelerated_crc([[maybe_unused]] crc_detail::crc_path path,
                                       [[maybe_unused]] std::span<const std::byte> data,
                                       typename M::value_type crc) noexcept
{
#if DEPOT_CRC_PCLMUL
    auto p = reinterpret_cast<const unsigned char*>(data.data());
    if (path == crc_detail::crc_path::vpclmul && data.size() >= 256)
        return static_cast<typename M::value_type>(~vpclmul_update<M>(~crc, p, data.size()));
    if (path != crc_detail::crc_path::portable && data.size() >= 64)
        return static_cast<typename M::value_type>(~pclmul_update<M>(~crc, p, data.size()));
#endif
    return portable_crc<M>(data, crc);
}

} // namespace

std::uint32_t crc32(std::span<const std::byte> data, std::uint32_t crc) noexcept
{
    return ~update<crc32_model>(~crc, data);
}

std::uint32_t crc32c(std::span<const std::byte> data, std::uint32_t crc) noexcept
{
    return ~update<crc32c_model>(~crc, data);
}

std::uint64_t crc64nvme(std::span<const std::byte> data, std::uint64_t crc) noexcept
{
    return ~update<crc64nvme_model>(~crc, data);
}

std::uint32_t crc32_combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t len_b) noexcept
{
    return combine<crc32_model>(crc_a, crc_b, len_b);
}

std::uint32_t crc32c_combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t len_b) noexcept
{
    return combine<crc32c_model>(crc_a, crc_b, len_b);
}

std::uint64_t crc64nvme_combine(std::uint64_t crc_a, std::uint64_t crc_b, std::uint64_t len_b) noexcept
{
    return combine<crc64nvme_model>(crc_a, crc_b, len_b);
}

namespace crc_detail {

std::uint64_t portable(crc_kind kind, std::span<const std::byte> data, std::uint64_t crc) noexcept
{
    switch (kind) {
    case crc_kind::crc32:
        return portable_crc<crc32_model>(data, static_cast<std::uint32_t>(crc));
    case crc_kind::crc32c:
        return portable_crc<crc32c_model>(data, static_cast<std::uint32_t>(crc));
    case crc_kind::crc64nvme:
        return portable_crc<crc64nvme_model>(data, crc);
    }
    return 0;
}

std::uint64_t compute(crc_path path, crc_kind kind, std::span<const std::byte> data,
                      std::uint64_t crc) noexcept
{
    switch (kind) {
    case crc_kind::crc32:
        return accelerated_crc<crc32_model>(path, data, static_cast<std::uint32_t>(crc));
    case crc_kind::crc32c:
        return accelerated_crc<crc32c_model>(path, data, static_cast<std::uint32_t>(crc));
    case crc_kind::crc64nvme:
        return accelerated_crc<crc64nvme_model>(path, data, crc);
    }
    return 0;
}

bool available(crc_path path) noexcept
{
    switch (path) {
    case crc_path::portable:
        return true;
#if DEPOT_CRC_PCLMUL
    case crc_path::pclmul:
        return cpu_has_pclmul();
    case crc_path::vpclmul:
        return cpu_has_vpclmul();
#else
    default:
        return false;
#endif
    }
    return false;
}

} // namespace crc_detail
} // namespace depot
