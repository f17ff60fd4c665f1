#include "common/checksum.hpp"

#include "common/crc.hpp"
#include "common/hash.hpp"

#include <array>
#include <stdexcept>

namespace depot {
namespace {

struct algorithm_info
{
    checksum_algorithm algorithm;
    std::string_view name;
    std::string_view suffix;
    std::string_view header;
    std::string_view xml_element;
    std::size_t size;
};

constexpr std::array<algorithm_info, 5> algorithms{{
    {checksum_algorithm::crc32, "CRC32", "crc32", "x-amz-checksum-crc32", "ChecksumCRC32", 4},
    {checksum_algorithm::crc32c, "CRC32C", "crc32c", "x-amz-checksum-crc32c", "ChecksumCRC32C", 4},
    {checksum_algorithm::crc64nvme, "CRC64NVME", "crc64nvme", "x-amz-checksum-crc64nvme", "ChecksumCRC64NVME",
     8},
    {checksum_algorithm::sha1, "SHA1", "sha1", "x-amz-checksum-sha1", "ChecksumSHA1", 20},
    {checksum_algorithm::sha256, "SHA256", "sha256", "x-amz-checksum-sha256", "ChecksumSHA256", 32},
}};

const algorithm_info& info(checksum_algorithm algorithm) noexcept
{
    return algorithms[static_cast<std::size_t>(algorithm)];
}

bool iequals(std::string_view a, std::string_view b) noexcept
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i];
        char y = b[i];
        if (x >= 'A' && x <= 'Z')
            x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z')
            y = static_cast<char>(y - 'A' + 'a');
        if (x != y)
            return false;
    }
    return true;
}

void require_crc(checksum_algorithm algorithm)
{
    if (!is_crc(algorithm))
        throw std::invalid_argument(std::string(to_string(algorithm)) + " is not a CRC");
}

void require_size(checksum_algorithm algorithm, std::string_view raw)
{
    if (raw.size() != checksum_size(algorithm))
        throw std::invalid_argument("a raw " + std::string(to_string(algorithm)) + " checksum has " +
                                    std::to_string(checksum_size(algorithm)) + " bytes, not " +
                                    std::to_string(raw.size()));
}

std::uint64_t crc_update(checksum_algorithm algorithm, std::uint64_t crc,
                         std::span<const std::byte> data) noexcept
{
    switch (algorithm) {
    case checksum_algorithm::crc32:
        return crc32(data, static_cast<std::uint32_t>(crc));
    case checksum_algorithm::crc32c:
        return crc32c(data, static_cast<std::uint32_t>(crc));
    case checksum_algorithm::crc64nvme:
        return crc64nvme(data, crc);
    case checksum_algorithm::sha1:
    case checksum_algorithm::sha256:
        break;
    }
    return crc;
}

} // namespace

static_assert(algorithms[static_cast<std::size_t>(checksum_algorithm::sha256)].algorithm ==
              checksum_algorithm::sha256);

std::string_view to_string(checksum_algorithm algorithm) noexcept
{
    return info(algorithm).name;
}
std::string_view header_suffix(checksum_algorithm algorithm) noexcept
{
    return info(algorithm).suffix;
}
std::string_view checksum_header_name(checksum_algorithm algorithm) noexcept
{
    return info(algorithm).header;
}
std::string_view checksum_xml_element(checksum_algorithm algorithm) noexcept
{
    return info(algorithm).xml_element;
}
std::size_t checksum_size(checksum_algorithm algorithm) noexcept
{
    return info(algorithm).size;
}

bool is_crc(checksum_algorithm algorithm) noexcept
{
    return algorithm == checksum_algorithm::crc32 || algorithm == checksum_algorithm::crc32c ||
           algorithm == checksum_algorithm::crc64nvme;
}

std::optional<checksum_algorithm> parse_checksum_algorithm(std::string_view name) noexcept
{
    for (const auto& a : algorithms) {
        if (iequals(name, a.name))
            return a.algorithm;
    }
    return std::nullopt;
}

std::optional<checksum_algorithm> checksum_algorithm_from_header(std::string_view header_name) noexcept
{
    for (const auto& a : algorithms) {
        if (iequals(header_name, a.header))
            return a.algorithm;
    }
    return std::nullopt;
}

std::string_view to_string(checksum_type type) noexcept
{
    return type == checksum_type::full_object ? "FULL_OBJECT" : "COMPOSITE";
}

std::optional<checksum_type> parse_checksum_type(std::string_view name) noexcept
{
    if (iequals(name, "COMPOSITE"))
        return checksum_type::composite;
    if (iequals(name, "FULL_OBJECT"))
        return checksum_type::full_object;
    return std::nullopt;
}

bool multipart_supports(checksum_algorithm algorithm, checksum_type type) noexcept
{
    if (type == checksum_type::full_object)
        return is_crc(algorithm);
    return algorithm != checksum_algorithm::crc64nvme;
}

checksum_type default_multipart_checksum_type(checksum_algorithm algorithm) noexcept
{
    return algorithm == checksum_algorithm::crc64nvme ? checksum_type::full_object : checksum_type::composite;
}

// ---- checksummer ----

checksummer::checksummer(checksum_algorithm algorithm) : algorithm_(algorithm)
{
    if (algorithm == checksum_algorithm::sha1)
        hasher_ = std::make_unique<hasher>(digest_kind::sha1);
    else if (algorithm == checksum_algorithm::sha256)
        hasher_ = std::make_unique<hasher>(digest_kind::sha256);
}

checksummer::~checksummer() = default;
checksummer::checksummer(checksummer&&) noexcept = default;
checksummer& checksummer::operator=(checksummer&&) noexcept = default;

void checksummer::update(std::span<const std::byte> data)
{
    size_ += data.size();
    if (hasher_)
        hasher_->update(data);
    else
        crc_ = crc_update(algorithm_, crc_, data);
}

std::string checksummer::finish()
{
    std::string raw = hasher_ ? hasher_->finish() : crc_to_raw(algorithm_, crc_);
    reset();
    return raw;
}

void checksummer::reset()
{
    crc_ = 0;
    size_ = 0;
    if (hasher_)
        hasher_->reset();
}

std::string compute_checksum(checksum_algorithm algorithm, std::span<const std::byte> data)
{
    if (is_crc(algorithm))
        return crc_to_raw(algorithm, crc_update(algorithm, 0, data));
    checksummer c(algorithm);
    c.update(data);
    return c.finish();
}

// ---- raw values and combination ----

std::string crc_to_raw(checksum_algorithm algorithm, std::uint64_t crc)
{
    require_crc(algorithm);
    std::string raw(checksum_size(algorithm), '\0');
    for (std::size_t i = raw.size(); i-- > 0; crc >>= 8)
        raw[i] = static_cast<char>(crc & 0xff);
    return raw;
}

std::uint64_t crc_from_raw(checksum_algorithm algorithm, std::string_view raw)
{
    require_crc(algorithm);
    require_size(algorithm, raw);
    std::uint64_t crc = 0;
    for (char c : raw)
        crc = (crc << 8) | static_cast<unsigned char>(c);
    return crc;
}

std::uint64_t crc_combine(checksum_algorithm algorithm, std::uint64_t crc_a, std::uint64_t crc_b,
                          std::uint64_t len_b)
{
    switch (algorithm) {
    case checksum_algorithm::crc32:
        return crc32_combine(static_cast<std::uint32_t>(crc_a), static_cast<std::uint32_t>(crc_b), len_b);
    case checksum_algorithm::crc32c:
        return crc32c_combine(static_cast<std::uint32_t>(crc_a), static_cast<std::uint32_t>(crc_b), len_b);
    case checksum_algorithm::crc64nvme:
        return crc64nvme_combine(crc_a, crc_b, len_b);
    case checksum_algorithm::sha1:
    case checksum_algorithm::sha256:
        break;
    }
    require_crc(algorithm);
    return 0;
}

// ---- wire values ----

std::string encode_checksum(std::string_view raw)
{
    return to_base64(raw);
}

result<std::string> decode_checksum(checksum_algorithm algorithm, std::string_view value)
{
    auto raw = from_base64(value);
    if (!raw || raw->size() != checksum_size(algorithm)) {
        auto header = std::string(checksum_header_name(algorithm));
        return make_error(errc::invalid_argument, "Value for " + header + " header is invalid.", header);
    }
    return std::move(*raw);
}

result<void> verify_checksum(checksum_algorithm algorithm, std::string_view value,
                             std::string_view actual_raw)
{
    auto expected = decode_checksum(algorithm, value);
    if (!expected)
        return std::move(expected).error();
    if (*expected != actual_raw)
        return make_error(errc::bad_digest, "The " + std::string(to_string(algorithm)) +
                                                " you specified did not match the calculated checksum.");
    return ok();
}

// ---- multipart ----

std::string composite_checksum(checksum_algorithm algorithm, std::span<const std::string> part_raw_checksums)
{
    if (part_raw_checksums.empty())
        throw std::invalid_argument("a composite checksum needs at least one part");
    checksummer c(algorithm);
    for (const auto& raw : part_raw_checksums) {
        require_size(algorithm, raw);
        c.update(raw);
    }
    return encode_checksum(c.finish()) + "-" + std::to_string(part_raw_checksums.size());
}

std::string full_object_checksum(checksum_algorithm algorithm, std::span<const part_checksum> parts)
{
    require_crc(algorithm);
    std::uint64_t crc = 0; // the CRC of no data
    for (const auto& part : parts)
        crc = crc_combine(algorithm, crc, crc_from_raw(algorithm, part.raw), part.size);
    return crc_to_raw(algorithm, crc);
}

} // namespace depot
