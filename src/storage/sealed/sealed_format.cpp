#include "storage/sealed/sealed_format.hpp"

#include "common/hash.hpp"
#include "common/secret_box.hpp"

#include <climits>
#include <cstring>
#include <memory>
#include <openssl/evp.h>
#include <stdexcept>

namespace depot::storage::sealed {
namespace {

constexpr std::string_view magic = "DPS1";

struct ctx_deleter
{
    void operator()(EVP_CIPHER_CTX* c) const noexcept { EVP_CIPHER_CTX_free(c); }
};
using ctx_ptr = std::unique_ptr<EVP_CIPHER_CTX, ctx_deleter>;

void check(int rc, const char* what)
{
    if (rc != 1)
        throw std::runtime_error(std::string("sealed blob: ") + what + " failed");
}

std::array<unsigned char, nonce_size> nonce_of(const blob_key& key, std::uint64_t index)
{
    auto nonce = key.nonce_base;
    for (std::size_t i = 0; i < 8; ++i)
        nonce[nonce_size - 1 - i] ^= static_cast<unsigned char>(index >> (8 * i));
    return nonce;
}

std::array<unsigned char, 9> aad_of(std::uint64_t index, bool final)
{
    std::array<unsigned char, 9> aad{};
    for (std::size_t i = 0; i < 8; ++i)
        aad[7 - i] = static_cast<unsigned char>(index >> (8 * i));
    aad[8] = final ? 1 : 0;
    return aad;
}

/// A GCM context keyed for segment `index`, its associated data fed.
ctx_ptr segment_ctx(const blob_key& key, std::uint64_t index, bool final, bool encrypt)
{
    ctx_ptr ctx(EVP_CIPHER_CTX_new());
    if (!ctx)
        throw std::bad_alloc();
    auto init = encrypt ? EVP_EncryptInit_ex : EVP_DecryptInit_ex;
    auto update = encrypt ? EVP_EncryptUpdate : EVP_DecryptUpdate;
    check(init(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr), "init");
    check(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(nonce_size), nullptr),
          "SET_IVLEN");
    const auto nonce = nonce_of(key, index);
    check(init(ctx.get(), nullptr, nullptr, key.key.data(), nonce.data()), "init");
    const auto aad = aad_of(index, final);
    int len = 0;
    check(update(ctx.get(), nullptr, &len, aad.data(), static_cast<int>(aad.size())), "AAD");
    return ctx;
}

unsigned char* u8(std::byte* p)
{
    return reinterpret_cast<unsigned char*>(p);
}
const unsigned char* u8(const std::byte* p)
{
    return reinterpret_cast<const unsigned char*>(p);
}

} // namespace

std::uint64_t segment_count(std::uint64_t plain) noexcept
{
    return plain == 0 ? 1 : (plain + segment_plain - 1) / segment_plain;
}

std::uint64_t sealed_size(std::uint64_t plain) noexcept
{
    return header_size + plain + segment_count(plain) * tag_size;
}

std::optional<std::uint64_t> plain_size(std::uint64_t sealed) noexcept
{
    if (sealed < header_size + tag_size)
        return std::nullopt;
    const std::uint64_t body = sealed - header_size;
    const std::uint64_t full = body / segment_sealed;
    const std::uint64_t rest = body % segment_sealed;
    if (rest == 0)
        return full * segment_plain; // full >= 1 here
    if (rest > tag_size)
        return full * segment_plain + (rest - tag_size);
    if (rest == tag_size && full == 0)
        return 0;
    return std::nullopt; // an empty segment after full ones is never written
}

std::string make_header(std::string_view wrapping_key, blob_key& key)
{
    const auto fresh = random_bytes(key_size + nonce_size);
    std::memcpy(key.key.data(), fresh.data(), key_size);
    std::memcpy(key.nonce_base.data(), fresh.data() + key_size, nonce_size);
    std::string header(magic);
    header += secret_box::seal(wrapping_key, fresh, magic);
    if (header.size() != header_size)
        throw std::logic_error("sealed blob: unexpected header size");
    return header;
}

result<blob_key> open_header(std::string_view wrapping_key, std::span<const std::byte> header)
{
    const std::string_view text(reinterpret_cast<const char*>(header.data()), header.size());
    if (text.size() != header_size || text.substr(0, magic.size()) != magic)
        return make_error(errc::invalid_argument, "not a sealed blob header");
    auto opened = secret_box::open(wrapping_key, text.substr(magic.size()), magic);
    if (!opened || opened->size() != key_size + nonce_size)
        return make_error(errc::invalid_argument,
                          "the blob's data key cannot be unwrapped: another key, or the header was altered");
    blob_key key;
    std::memcpy(key.key.data(), opened->data(), key_size);
    std::memcpy(key.nonce_base.data(), opened->data() + key_size, nonce_size);
    return key;
}

void seal_segment(const blob_key& key, std::uint64_t index, bool final, std::span<const std::byte> plain,
                  std::span<std::byte> out)
{
    if (plain.size() > segment_plain || out.size() != plain.size() + tag_size)
        throw std::invalid_argument("sealed blob: bad segment size");
    auto ctx = segment_ctx(key, index, final, true);
    int len = 0;
    if (!plain.empty())
        check(EVP_EncryptUpdate(ctx.get(), u8(out.data()), &len, u8(plain.data()),
                                static_cast<int>(plain.size())),
              "EncryptUpdate");
    int final_len = 0;
    unsigned char spare[16];
    check(EVP_EncryptFinal_ex(ctx.get(), spare, &final_len), "EncryptFinal");
    check(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(tag_size),
                              u8(out.data() + plain.size())),
          "GET_TAG");
}

result<void> open_segment(const blob_key& key, std::uint64_t index, bool final,
                          std::span<const std::byte> sealed, std::span<std::byte> out)
{
    if (sealed.size() < tag_size || sealed.size() > segment_sealed || out.size() != sealed.size() - tag_size)
        throw std::invalid_argument("sealed blob: bad segment size");
    const auto body = sealed.first(sealed.size() - tag_size);
    auto ctx = segment_ctx(key, index, final, false);
    int len = 0;
    if (!body.empty())
        check(EVP_DecryptUpdate(ctx.get(), u8(out.data()), &len, u8(body.data()),
                                static_cast<int>(body.size())),
              "DecryptUpdate");
    std::array<unsigned char, tag_size> tag{};
    std::memcpy(tag.data(), sealed.data() + body.size(), tag_size);
    check(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(tag_size), tag.data()),
          "SET_TAG");
    int final_len = 0;
    unsigned char spare[16];
    if (EVP_DecryptFinal_ex(ctx.get(), spare, &final_len) != 1) {
        // Nothing unauthenticated may leave: wipe what was decrypted.
        std::memset(out.data(), 0, out.size());
        return make_error(errc::invalid_argument, "a sealed segment failed authentication");
    }
    return ok();
}

} // namespace depot::storage::sealed
