#include "s3/tagging.hpp"

#include "common/uri.hpp"
#include "s3/utf8.hpp"
#include "s3/xml_read.hpp"

#include <set>
#include <string>

namespace depot::s3 {

result<void> check_tag_set(const std::vector<tag>& tags, std::size_t max_tags)
{
    std::set<std::string_view, std::less<>> seen;
    for (const auto& t : tags) {
        if (!is_storable_text(t.key) || !is_storable_text(t.value))
            return make_error(errc::invalid_tag, "Tags must be valid UTF-8 without NUL");
        if (t.key.empty() || xml_read::code_points(t.key) > 128)
            return make_error(errc::invalid_tag, "The TagKey you have provided is invalid");
        if (xml_read::code_points(t.value) > 256)
            return make_error(errc::invalid_tag, "The TagValue you have provided is invalid");
        if (t.key.starts_with("aws:"))
            return make_error(errc::invalid_tag, "Your TagKey cannot be prefixed with aws:");
        if (!seen.insert(t.key).second)
            return make_error(errc::invalid_tag, "Cannot provide multiple Tags with the same key");
    }
    if (tags.size() > max_tags)
        return make_error(errc::invalid_tag,
                          max_tags == max_object_tags
                              ? "Object tags cannot be greater than " + std::to_string(max_tags)
                              : "Bucket tag count cannot be greater than " + std::to_string(max_tags));
    return ok();
}

result<std::vector<tag>> parse_tagging_header(std::string_view header)
{
    static constexpr std::string_view malformed_header =
        "The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters without "
        "tag name duplicates.";
    std::vector<tag> tags;
    std::set<std::string, std::less<>> seen;
    while (!header.empty()) {
        const auto amp = header.find('&');
        const auto pair = header.substr(0, amp);
        header = amp == std::string_view::npos ? std::string_view{} : header.substr(amp + 1);
        if (pair.empty())
            continue;
        const auto eq = pair.find('=');
        auto key = uri_decode(pair.substr(0, eq), true);
        auto value =
            uri_decode(eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1), true);
        if (!key || !value || !seen.insert(*key).second)
            return make_error(errc::invalid_argument, std::string(malformed_header), "x-amz-tagging");
        tags.push_back(tag{.key = std::move(*key), .value = std::move(*value)});
    }
    if (auto valid = check_tag_set(tags, max_object_tags); !valid)
        return std::move(valid).error();
    return tags;
}

} // namespace depot::s3
