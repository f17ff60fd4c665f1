#include "common/hash.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdexcept>

namespace depot {
namespace {

const EVP_MD* md_of(digest_kind kind)
{
    switch (kind) {
    case digest_kind::md5:
        return EVP_md5();
    case digest_kind::sha1:
        return EVP_sha1();
    case digest_kind::sha256:
        return EVP_sha256();
    }
    throw std::logic_error("unknown digest kind");
}

} // namespace

struct hasher::impl
{
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~impl() { EVP_MD_CTX_free(ctx); }
};

hasher::hasher(digest_kind kind) : impl_(std::make_unique<impl>()), kind_(kind)
{
    if (!impl_->ctx)
        throw std::bad_alloc();
    reset();
}

hasher::~hasher() = default;
hasher::hasher(hasher&&) noexcept = default;
hasher& hasher::operator=(hasher&&) noexcept = default;

void hasher::reset()
{
    if (EVP_DigestInit_ex(impl_->ctx, md_of(kind_), nullptr) != 1)
        throw std::runtime_error("EVP_DigestInit_ex failed");
}

void hasher::update(std::span<const std::byte> data)
{
    if (!data.empty() && EVP_DigestUpdate(impl_->ctx, data.data(), data.size()) != 1)
        throw std::runtime_error("EVP_DigestUpdate failed");
}

std::string hasher::finish()
{
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(impl_->ctx, out, &len) != 1)
        throw std::runtime_error("EVP_DigestFinal_ex failed");
    return std::string(reinterpret_cast<const char*>(out), len);
}

static std::string one_shot(digest_kind kind, std::string_view data)
{
    hasher h(kind);
    h.update(data);
    return h.finish();
}

std::string md5(std::string_view data)
{
    return one_shot(digest_kind::md5, data);
}
std::string sha1(std::string_view data)
{
    return one_shot(digest_kind::sha1, data);
}
std::string sha256(std::string_view data)
{
    return one_shot(digest_kind::sha256, data);
}

std::string hmac_sha256(std::string_view key, std::string_view data)
{
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
              reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len))
        throw std::runtime_error("HMAC failed");
    return std::string(reinterpret_cast<const char*>(out), len);
}

std::string to_hex(std::string_view raw)
{
    static constexpr char digits[] = "0123456789abcdef";
    std::string out(raw.size() * 2, '\0');
    for (std::size_t i = 0; i < raw.size(); ++i) {
        auto b = static_cast<unsigned char>(raw[i]);
        out[2 * i] = digits[b >> 4];
        out[2 * i + 1] = digits[b & 0xf];
    }
    return out;
}

static int hex_value(char c) noexcept
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

std::optional<std::string> from_hex(std::string_view hex)
{
    if (hex.size() % 2 != 0)
        return std::nullopt;
    std::string out(hex.size() / 2, '\0');
    for (std::size_t i = 0; i < out.size(); ++i) {
        int hi = hex_value(hex[2 * i]);
        int lo = hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return std::nullopt;
        out[i] = static_cast<char>((hi << 4) | lo);
    }
    return out;
}

std::string to_base64(std::string_view raw)
{
    std::string out(4 * ((raw.size() + 2) / 3), '\0');
    int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(raw.data()), static_cast<int>(raw.size()));
    out.resize(static_cast<std::size_t>(n));
    return out;
}

std::optional<std::string> from_base64(std::string_view b64)
{
    if (b64.size() % 4 != 0)
        return std::nullopt;
    for (std::size_t i = 0; i < b64.size(); ++i) {
        char c = b64[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
                  c == '/' || (c == '=' && i + 2 >= b64.size());
        if (!ok)
            return std::nullopt;
    }
    std::string out(3 * (b64.size() / 4), '\0');
    int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(b64.data()), static_cast<int>(b64.size()));
    if (n < 0)
        return std::nullopt;
    std::size_t pad = 0;
    if (!b64.empty() && b64.back() == '=')
        pad = (b64.size() >= 2 && b64[b64.size() - 2] == '=') ? 2 : 1;
    out.resize(static_cast<std::size_t>(n) - pad);
    return out;
}

std::string random_bytes(std::size_t n)
{
    std::string out(n, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1)
        throw std::runtime_error("RAND_bytes failed");
    return out;
}

std::string random_text(std::string_view alphabet, std::size_t n)
{
    // Rejection sampling keeps every character equally likely.
    const auto limit = static_cast<unsigned char>(256 - 256 % alphabet.size());
    std::string out;
    while (out.size() < n)
        for (unsigned char c : random_bytes(n))
            if (c < limit && out.size() < n)
                out += alphabet[c % alphabet.size()];
    return out;
}

bool constant_time_equal(std::string_view a, std::string_view b) noexcept
{
    return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

} // namespace depot
