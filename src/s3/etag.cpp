#include "s3/etag.hpp"

#include "common/hash.hpp"

namespace depot::s3 {

std::string quote_etag(std::string_view bare)
{
    std::string out;
    out.reserve(bare.size() + 2);
    out.push_back('"');
    out.append(bare);
    out.push_back('"');
    return out;
}

std::string_view unquote_etag(std::string_view etag) noexcept
{
    while (!etag.empty() && (etag.front() == ' ' || etag.front() == '\t'))
        etag.remove_prefix(1);
    while (!etag.empty() && (etag.back() == ' ' || etag.back() == '\t'))
        etag.remove_suffix(1);
    if (etag.starts_with("W/"))
        etag.remove_prefix(2);
    if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"')
        etag = etag.substr(1, etag.size() - 2);
    return etag;
}

result<std::string> multipart_etag(std::span<const std::string> part_etags)
{
    if (part_etags.empty())
        return make_error(errc::invalid_argument, "A multipart object needs at least one part");
    std::string digests;
    digests.reserve(part_etags.size() * 16);
    for (const auto& etag : part_etags) {
        const auto raw = from_hex(unquote_etag(etag));
        if (!raw || raw->size() != 16)
            return make_error(errc::invalid_part);
        digests.append(*raw);
    }
    return to_hex(md5(digests)) + "-" + std::to_string(part_etags.size());
}

} // namespace depot::s3
