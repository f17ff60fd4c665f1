#include "s3/xml.hpp"

#include "s3/delete_conditions_xml.hpp"
#include "s3/tagging.hpp"
#include "s3/utf8.hpp"
#include "s3/xml_read.hpp"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <pugixml.hpp>
#include <set>

namespace depot::s3 {

// ---- writer --------------------------------------------------------------------------------------------

namespace {

constexpr std::string_view replacement_character = "\xEF\xBF\xBD"; // U+FFFD

/// True for bytes that can be copied as they are: printable ASCII other than the five XML specials.
constexpr bool is_plain(unsigned char c) noexcept
{
    return c >= 0x20 && c < 0x80 && c != '&' && c != '<' && c != '>' && c != '"' && c != '\'';
}

} // namespace

void append_xml_escaped(std::string& out, std::string_view text)
{
    static constexpr char hex[] = "0123456789ABCDEF";
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t run = pos;
        while (run < text.size() && is_plain(static_cast<unsigned char>(text[run])))
            ++run;
        out.append(text.substr(pos, run - pos));
        pos = run;
        if (pos == text.size())
            break;
        const auto c = static_cast<unsigned char>(text[pos]);
        switch (c) {
        case '&':
            out.append("&amp;");
            break;
        case '<':
            out.append("&lt;");
            break;
        case '>':
            out.append("&gt;");
            break;
        case '"':
            out.append("&quot;");
            break;
        case '\'':
            out.append("&apos;");
            break;
        default:
            if (c == 0) {
                out.append(replacement_character);
            } else if (c < 0x20) {
                // Character references keep CR and TAB intact through parsers' end-of-line normalisation.
                out.append("&#x");
                if (c >= 0x10)
                    out.push_back(hex[c >> 4]);
                out.push_back(hex[c & 0xF]);
                out.push_back(';');
            } else {
                const std::size_t start = pos;
                if (decode_utf8(text, pos)) {
                    out.append(text.substr(start, pos - start));
                    continue;
                }
                out.append(replacement_character);
            }
            break;
        }
        ++pos;
    }
}

std::string xml_escape(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    append_xml_escaped(out, text);
    return out;
}

xml_writer::xml_writer()
{
    out_.reserve(512);
    out_.append(R"(<?xml version="1.0" encoding="UTF-8"?>)");
}

void xml_writer::start_tag(std::string_view name)
{
    out_.push_back('<');
    out_.append(name);
    out_.push_back('>');
}

void xml_writer::end_tag(std::string_view name)
{
    out_.append("</");
    out_.append(name);
    out_.push_back('>');
}

xml_writer& xml_writer::open(std::string_view name, std::string_view xmlns)
{
    if (xmlns.empty()) {
        start_tag(name);
    } else {
        out_.push_back('<');
        out_.append(name);
        out_.append(" xmlns=\"");
        append_xml_escaped(out_, xmlns);
        out_.append("\">");
    }
    open_.push_back(name);
    return *this;
}

xml_writer& xml_writer::close()
{
    assert(!open_.empty());
    end_tag(open_.back());
    open_.pop_back();
    return *this;
}

xml_writer& xml_writer::element(std::string_view name, std::string_view text)
{
    start_tag(name);
    append_xml_escaped(out_, text);
    end_tag(name);
    return *this;
}

xml_writer& xml_writer::element(std::string_view name, bool value)
{
    return element(name, value ? std::string_view("true") : std::string_view("false"));
}

xml_writer& xml_writer::text(std::string_view text)
{
    append_xml_escaped(out_, text);
    return *this;
}

xml_writer& xml_writer::element_if(std::string_view name, std::string_view text)
{
    if (!text.empty())
        element(name, text);
    return *this;
}

xml_writer& xml_writer::signed_number(std::string_view name, long long value)
{
    char buf[24];
    const auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
    start_tag(name);
    out_.append(buf, end);
    end_tag(name);
    return *this;
}

xml_writer& xml_writer::unsigned_number(std::string_view name, unsigned long long value)
{
    char buf[24];
    const auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
    start_tag(name);
    out_.append(buf, end);
    end_tag(name);
    return *this;
}

std::string xml_writer::finish() &&
{
    while (!open_.empty())
        close();
    return std::move(out_);
}

// ---- parsers -------------------------------------------------------------------------------------------

namespace xml_read {

error malformed()
{
    return make_error(errc::malformed_xml);
}

std::string_view trim(std::string_view s) noexcept
{
    constexpr std::string_view ws = " \t\r\n";
    const auto first = s.find_first_not_of(ws);
    if (first == std::string_view::npos)
        return {};
    return s.substr(first, s.find_last_not_of(ws) - first + 1);
}

/// The element name without a namespace prefix ("s3:Delete" -> "Delete").
std::string_view local_name(const pugi::xml_node& node) noexcept
{
    std::string_view name = node.name();
    if (const auto colon = name.find(':'); colon != std::string_view::npos)
        return name.substr(colon + 1);
    return name;
}

/// The first child element with the given local name, or an empty node.
pugi::xml_node child(const pugi::xml_node& parent, std::string_view name)
{
    for (auto c = parent.first_child(); c; c = c.next_sibling())
        if (c.type() == pugi::node_element && local_name(c) == name)
            return c;
    return {};
}

/// Every child element with the given local name, in document order.
std::vector<pugi::xml_node> children(const pugi::xml_node& parent, std::string_view name)
{
    std::vector<pugi::xml_node> out;
    for (auto c = parent.first_child(); c; c = c.next_sibling())
        if (c.type() == pugi::node_element && local_name(c) == name)
            out.push_back(c);
    return out;
}

/// The element's character data: all text and CDATA children concatenated, untrimmed (keys may start or
/// end with spaces).
std::string text(const pugi::xml_node& node)
{
    std::string out;
    for (auto c = node.first_child(); c; c = c.next_sibling())
        if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata)
            out.append(c.value());
    return out;
}

namespace {

/// True if `body` holds a NUL byte or a numeric character reference to no character XML has: U+0000
/// (`&#0;`, `&#x00;`, ...), a surrogate, or a value past U+10FFFF. pugixml decodes a reference into 32
/// bits, wrapping larger values (`&#4294967296;` is 0), and a NUL ends the C string it hands out, so
/// `important.db&#0;.tmp` would read as `important.db`; XML 1.0 has none of these characters.
bool holds_nul(std::string_view body) noexcept
{
    if (body.find('\0') != std::string_view::npos)
        return true;
    for (auto at = body.find("&#"); at != std::string_view::npos; at = body.find("&#", at + 2)) {
        auto rest = body.substr(at + 2);
        const bool hex = !rest.empty() && (rest.front() == 'x' || rest.front() == 'X');
        if (hex)
            rest.remove_prefix(1);
        std::uint64_t value = 0;
        std::size_t n = 0;
        for (; n < rest.size(); ++n) {
            const char c = rest[n];
            int digit = -1;
            if (c >= '0' && c <= '9')
                digit = c - '0';
            else if (hex && c >= 'a' && c <= 'f')
                digit = c - 'a' + 10;
            else if (hex && c >= 'A' && c <= 'F')
                digit = c - 'A' + 10;
            if (digit < 0)
                break;
            value = value * (hex ? 16 : 10) + static_cast<std::uint64_t>(digit);
            if (value > 0x10FFFF)
                return true; // stays past the last character however many digits follow
        }
        if (n == 0 || n >= rest.size() || rest[n] != ';')
            continue; // not a reference: the parser refuses it or reads it as text
        if (value == 0 || (value >= 0xD800 && value <= 0xDFFF))
            return true;
    }
    return false;
}

/// Elements that S3's request documents repeat below `parent`; every other element appears at most once
/// per parent. An Object Lock configuration has one Rule, the other documents with Rules a list.
bool is_repeatable(std::string_view parent, std::string_view name) noexcept
{
    static constexpr std::string_view names[] = {"Object",
                                                 "Part",
                                                 "Tag",
                                                 "Grant",
                                                 "CORSRule",
                                                 "AllowedMethod",
                                                 "AllowedOrigin",
                                                 "AllowedHeader",
                                                 "ExposeHeader",
                                                 "Transition",
                                                 "NoncurrentVersionTransition"};
    if (name == "Rule")
        return parent != "ObjectLockConfiguration";
    return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

/// True if `node` has two child elements of one non-repeatable name.
bool repeats_a_child(const pugi::xml_node& node)
{
    std::vector<std::string_view> seen;
    const auto parent = local_name(node);
    for (auto c = node.first_child(); c; c = c.next_sibling()) {
        if (c.type() != pugi::node_element)
            continue;
        const auto name = local_name(c);
        if (is_repeatable(parent, name))
            continue;
        if (std::find(seen.begin(), seen.end(), name) != seen.end())
            return true;
        seen.push_back(name);
    }
    return false;
}

/// True if `root` or any element below it repeats a single element. Without this the first `<Mode>` of
/// two would decide and the second be dropped without a word. Walks in document order without
/// recursion, so a deeply nested body cannot exhaust the stack.
bool repeats_a_single_element(const pugi::xml_node& root)
{
    for (auto n = root; n;) {
        if (n.type() == pugi::node_element && repeats_a_child(n))
            return true;
        if (auto c = n.first_child()) {
            n = c;
            continue;
        }
        while (n != root && !n.next_sibling())
            n = n.parent();
        if (n == root)
            break;
        n = n.next_sibling();
    }
    return false;
}

} // namespace

/// Loads `body` and returns its single root element if its local name is `root`. Whitespace-only text
/// is kept (parse_ws_pcdata) so that a key made of spaces survives; DOCTYPEs are skipped, and pugixml
/// expands no entities besides the predefined ones, so there is no entity-expansion attack surface.
/// A NUL (raw or by reference) and a repeated single element are malformed.
result<pugi::xml_node> load(pugi::xml_document& doc, std::string_view body, std::string_view root)
{
    if (holds_nul(body))
        return malformed();
    const auto parsed = doc.load_buffer(body.data(), body.size(), pugi::parse_default | pugi::parse_ws_pcdata,
                                        pugi::encoding_utf8);
    if (!parsed)
        return malformed();
    pugi::xml_node element;
    for (auto c = doc.first_child(); c; c = c.next_sibling()) {
        if (c.type() == pugi::node_element) {
            if (element)
                return malformed(); // more than one root element
            element = c;
        } else if (c.type() == pugi::node_pcdata && !trim(c.value()).empty()) {
            return malformed(); // text outside the root element
        }
    }
    if (!element || local_name(element) != root || repeats_a_single_element(element))
        return malformed();
    return element;
}

bool is_blank(std::string_view body) noexcept
{
    return trim(body).empty();
}

/// Parses a decimal integer made only of digits; nullopt otherwise or on overflow.
std::optional<int> parse_int(std::string_view s) noexcept
{
    if (s.empty())
        return std::nullopt;
    int value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size() || s.front() == '-')
        return std::nullopt;
    return value;
}

/// Strips whitespace and one pair of surrounding double quotes.
std::string bare_etag(std::string_view s)
{
    s = trim(s);
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"')
        s = s.substr(1, s.size() - 2);
    return std::string(s);
}

std::size_t code_points(std::string_view s) noexcept
{
    return static_cast<std::size_t>(std::count_if(
        s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

} // namespace xml_read

using namespace xml_read;

result<create_bucket_configuration> parse_create_bucket_configuration(std::string_view body)
{
    if (is_blank(body))
        return create_bucket_configuration{};
    pugi::xml_document doc;
    auto root = load(doc, body, "CreateBucketConfiguration");
    if (!root)
        return std::move(root).error();
    create_bucket_configuration config;
    if (auto lc = child(*root, "LocationConstraint"))
        config.location_constraint = std::string(trim(text(lc)));
    return config;
}

result<delete_objects_request> parse_delete_objects(std::string_view body)
{
    pugi::xml_document doc;
    auto root = load(doc, body, "Delete");
    if (!root)
        return std::move(root).error();
    delete_objects_request request;
    if (auto quiet = child(*root, "Quiet")) {
        const auto value = text(quiet);
        const auto v = trim(value);
        if (v == "true" || v == "True" || v == "TRUE")
            request.quiet = true;
        else if (!(v == "false" || v == "False" || v == "FALSE"))
            return malformed();
    }
    for (auto c = root->first_child(); c; c = c.next_sibling()) {
        if (c.type() != pugi::node_element || local_name(c) != "Object")
            continue;
        if (request.objects.size() == max_delete_objects)
            return make_error(errc::malformed_xml,
                              "The request must contain no more than 1000 keys to delete.");
        auto key = child(c, "Key");
        if (!key)
            return malformed();
        object_identifier id{.key = text(key), .version_id = std::nullopt};
        if (auto version = child(c, "VersionId"))
            id.version_id = std::string(trim(text(version)));
        request.objects.push_back(std::move(id));
    }
    if (request.objects.empty())
        return malformed();
    return request;
}

result<std::vector<delete_object_conditions>> parse_delete_objects_conditions(std::string_view body)
{
    pugi::xml_document doc;
    auto root = load(doc, body, "Delete");
    if (!root)
        return std::move(root).error();
    std::vector<delete_object_conditions> out;
    for (auto c = root->first_child(); c; c = c.next_sibling()) {
        if (c.type() != pugi::node_element || local_name(c) != "Object")
            continue;
        delete_object_conditions conditions;
        const auto value = [&](std::string_view name) -> std::optional<std::string> {
            auto e = child(c, name);
            if (!e)
                return std::nullopt;
            return std::string(trim(text(e)));
        };
        conditions.etag = value("ETag");
        conditions.last_modified_time = value("LastModifiedTime");
        conditions.size = value("Size");
        out.push_back(std::move(conditions));
    }
    return out;
}

result<std::vector<completed_part>> parse_complete_multipart_upload(std::string_view body)
{
    pugi::xml_document doc;
    auto root = load(doc, body, "CompleteMultipartUpload");
    if (!root)
        return std::move(root).error();
    std::vector<completed_part> parts;
    for (auto c = root->first_child(); c; c = c.next_sibling()) {
        if (c.type() != pugi::node_element || local_name(c) != "Part")
            continue;
        auto number = child(c, "PartNumber");
        auto etag = child(c, "ETag");
        if (!number || !etag)
            return malformed();
        const auto n = parse_int(trim(text(number)));
        if (!n)
            return malformed();
        if (*n < 1 || *n > 10000)
            return make_error(errc::invalid_argument,
                              "Part number must be an integer between 1 and 10000, inclusive");
        completed_part part{.part_number = *n, .etag = bare_etag(text(etag)), .checksum = {}};
        const auto checksum = [&](std::string_view name) {
            auto e = child(c, name);
            return e ? std::string(trim(text(e))) : std::string();
        };
        part.checksum.crc32 = checksum("ChecksumCRC32");
        part.checksum.crc32c = checksum("ChecksumCRC32C");
        part.checksum.crc64nvme = checksum("ChecksumCRC64NVME");
        part.checksum.sha1 = checksum("ChecksumSHA1");
        part.checksum.sha256 = checksum("ChecksumSHA256");
        if (!parts.empty() && parts.back().part_number >= part.part_number)
            return make_error(errc::invalid_part_order);
        parts.push_back(std::move(part));
    }
    if (parts.empty())
        return make_error(errc::malformed_xml, "You must specify at least one part");
    return parts;
}

result<versioning_configuration> parse_versioning_configuration(std::string_view body)
{
    pugi::xml_document doc;
    auto root = load(doc, body, "VersioningConfiguration");
    if (!root)
        return std::move(root).error();
    versioning_configuration config;
    if (auto status = child(*root, "Status")) {
        const auto value = text(status);
        const auto v = trim(value);
        if (v == "Enabled")
            config.status = versioning_status::enabled;
        else if (v == "Suspended")
            config.status = versioning_status::suspended;
        else
            return malformed();
    }
    return config;
}

result<std::vector<tag>> parse_tagging(std::string_view body, std::size_t max_tags)
{
    pugi::xml_document doc;
    auto root = load(doc, body, "Tagging");
    if (!root)
        return std::move(root).error();
    auto set = child(*root, "TagSet");
    if (!set)
        return malformed();
    std::vector<tag> tags;
    for (auto c : children(set, "Tag")) {
        auto key = child(c, "Key");
        auto value = child(c, "Value");
        if (!key || !value)
            return malformed();
        tags.push_back(tag{.key = text(key), .value = text(value)});
    }
    if (auto valid = check_tag_set(tags, max_tags); !valid)
        return std::move(valid).error();
    return tags;
}

} // namespace depot::s3
