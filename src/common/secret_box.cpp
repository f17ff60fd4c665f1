#include "common/secret_box.hpp"

#include "common/hash.hpp"
#include "common/log.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <memory>
#include <openssl/evp.h>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

namespace depot::secret_box {
namespace {

constexpr char version = 1;
constexpr std::size_t nonce_size = 12;
constexpr std::size_t tag_size = 16;
constexpr std::size_t overhead = 1 + nonce_size + tag_size;

struct ctx_deleter
{
    void operator()(EVP_CIPHER_CTX* c) const noexcept { EVP_CIPHER_CTX_free(c); }
};
using ctx_ptr = std::unique_ptr<EVP_CIPHER_CTX, ctx_deleter>;

ctx_ptr new_ctx()
{
    ctx_ptr ctx(EVP_CIPHER_CTX_new());
    if (!ctx)
        throw std::bad_alloc();
    return ctx;
}

const unsigned char* bytes(std::string_view s)
{
    return reinterpret_cast<const unsigned char*>(s.data());
}
unsigned char* bytes(std::string& s)
{
    return reinterpret_cast<unsigned char*>(s.data());
}

void check_key(std::string_view key)
{
    if (key.size() != key_size)
        throw std::invalid_argument("secret_box: the key must be 32 bytes");
}

int int_size(std::size_t n)
{
    if (n > static_cast<std::size_t>(INT_MAX / 2))
        throw std::invalid_argument("secret_box: value too large");
    return static_cast<int>(n);
}

void openssl_check(int rc, const char* what)
{
    if (rc != 1)
        throw std::runtime_error(std::string("secret_box: ") + what + " failed");
}

/// Feeds the version byte and the caller's associated data as GCM additional authenticated data.
template <class Update>
void add_aad(EVP_CIPHER_CTX* ctx, std::string_view associated_data, Update update)
{
    int len = 0;
    const unsigned char v = static_cast<unsigned char>(version);
    openssl_check(update(ctx, nullptr, &len, &v, 1), "AAD");
    if (!associated_data.empty())
        openssl_check(update(ctx, nullptr, &len, bytes(associated_data), int_size(associated_data.size())),
                      "AAD");
}

std::string_view trim_space(std::string_view s)
{
    auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
    while (!s.empty() && space(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && space(s.back()))
        s.remove_suffix(1);
    return s;
}

std::string read_key_file(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error("cannot read server key file " + path.string());
    std::ostringstream text;
    text << in.rdbuf();
    auto key = parse_server_key(text.str());
    if (!key)
        throw std::runtime_error("server key file " + path.string() + ": " + key.error().message);
    struct stat st
    {};
    if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0)
        log::warn("server key file is accessible by group or others; chmod 600 it",
                  {{"path", path.string()}});
    return std::move(*key);
}

[[noreturn]] void throw_errno(const std::string& what)
{
    throw std::system_error(errno, std::generic_category(), what);
}

/// Writes `text` to a fresh 0600 file next to `path`, then links it into place: link() fails instead of
/// replacing an existing file, so a concurrent creator's key wins and both processes read the same one.
/// Returns false if `path` appeared in the meantime.
bool create_key_file(const std::filesystem::path& path, const std::string& text)
{
    auto tmp = path;
    tmp += ".tmp." + to_hex(random_bytes(8));
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        throw_errno("cannot create " + tmp.string());
    bool written =
        ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
    int saved = errno;
    ::close(fd);
    if (!written) {
        ::unlink(tmp.c_str());
        errno = saved;
        throw_errno("cannot write " + tmp.string());
    }
    int rc = ::link(tmp.c_str(), path.c_str());
    saved = errno;
    ::unlink(tmp.c_str());
    if (rc != 0) {
        if (saved == EEXIST)
            return false;
        errno = saved;
        throw_errno("cannot create " + path.string());
    }
    auto dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
    int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
    return true;
}

} // namespace

std::string seal(std::string_view key, std::string_view plaintext, std::string_view associated_data)
{
    check_key(key);
    std::string out(1 + nonce_size + plaintext.size() + tag_size, '\0');
    out[0] = version;
    auto nonce = random_bytes(nonce_size);
    std::memcpy(out.data() + 1, nonce.data(), nonce_size);

    auto ctx = new_ctx();
    openssl_check(EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr), "EncryptInit");
    openssl_check(
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(nonce_size), nullptr),
        "SET_IVLEN");
    openssl_check(EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, bytes(key), bytes(nonce)), "EncryptInit");
    add_aad(ctx.get(), associated_data, EVP_EncryptUpdate);

    unsigned char* ct = bytes(out) + 1 + nonce_size;
    int len = 0;
    openssl_check(EVP_EncryptUpdate(ctx.get(), ct, &len, bytes(plaintext), int_size(plaintext.size())),
                  "EncryptUpdate");
    int final_len = 0;
    openssl_check(EVP_EncryptFinal_ex(ctx.get(), ct + len, &final_len), "EncryptFinal");
    openssl_check(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(tag_size),
                                      ct + plaintext.size()),
                  "GET_TAG");
    return out;
}

result<std::string> open(std::string_view key, std::string_view sealed, std::string_view associated_data)
{
    check_key(key);
    auto rejected = [] {
        return make_error(errc::invalid_argument,
                          "sealed secret cannot be opened: wrong server key, or the value was altered");
    };
    if (sealed.size() < overhead || sealed[0] != version)
        return rejected();
    auto nonce = sealed.substr(1, nonce_size);
    auto ct = sealed.substr(1 + nonce_size, sealed.size() - overhead);
    std::string tag(sealed.substr(sealed.size() - tag_size));

    auto ctx = new_ctx();
    openssl_check(EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr), "DecryptInit");
    openssl_check(
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(nonce_size), nullptr),
        "SET_IVLEN");
    openssl_check(EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, bytes(key), bytes(nonce)), "DecryptInit");
    add_aad(ctx.get(), associated_data, EVP_DecryptUpdate);

    // One spare byte keeps the output pointer valid for an empty plaintext.
    std::string plain(ct.size() + 1, '\0');
    int len = 0;
    openssl_check(EVP_DecryptUpdate(ctx.get(), bytes(plain), &len, bytes(ct), int_size(ct.size())),
                  "DecryptUpdate");
    openssl_check(
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(tag_size), tag.data()),
        "SET_TAG");
    int final_len = 0;
    if (EVP_DecryptFinal_ex(ctx.get(), bytes(plain) + len, &final_len) != 1)
        return rejected();
    plain.resize(static_cast<std::size_t>(len + final_len));
    return plain;
}

result<std::string> parse_server_key(std::string_view hex)
{
    hex = trim_space(hex);
    auto raw = hex.size() == 2 * key_size ? from_hex(hex) : std::nullopt;
    if (!raw)
        return make_error(errc::invalid_argument,
                          "the server key must be 64 hexadecimal characters (32 bytes)");
    return std::move(*raw);
}

std::string load_or_create_server_key(const std::filesystem::path& path)
{
    if (std::filesystem::exists(path))
        return read_key_file(path);
    if (path.has_parent_path())
        std::filesystem::create_directories(path.parent_path());
    auto key = random_bytes(key_size);
    if (!create_key_file(path, to_hex(key) + "\n"))
        return read_key_file(path);
    log::info("created a new server key", {{"path", path.string()}});
    return key;
}

} // namespace depot::secret_box
