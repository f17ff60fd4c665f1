#include "s3/lifecycle.hpp"

#include "common/hash.hpp"
#include "s3/utf8.hpp"
#include "s3/xml.hpp"
#include "s3/xml_read.hpp"

#include <algorithm>
#include <charconv>
#include <set>

namespace depot::s3 {

using namespace xml_read;

namespace {

using namespace std::chrono_literals;

/// A decimal integer, signed, as the XML holds it; nullopt when it is not one (MalformedXML).
template <typename T>
std::optional<T> parse_number(std::string_view s) noexcept
{
    s = trim(s);
    if (s.empty())
        return std::nullopt;
    T value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size())
        return std::nullopt;
    return value;
}

/// A count of days that must be positive: MalformedXML when not a number, InvalidArgument with S3's
/// message when not positive.
result<int> positive_days(const pugi::xml_node& node, std::string_view what)
{
    auto n = parse_number<long long>(text(node));
    if (!n)
        return malformed();
    if (*n <= 0 || *n > 2147483647)
        return make_error(errc::invalid_argument, std::string(what) + " must be a positive integer");
    return static_cast<int>(*n);
}

result<std::uint64_t> object_size(const pugi::xml_node& node, std::string_view element)
{
    auto n = parse_number<long long>(text(node));
    if (!n)
        return malformed();
    if (*n < 0)
        return make_error(errc::invalid_argument, std::string(element) + " must be a non-negative integer");
    return static_cast<std::uint64_t>(*n);
}

/// The element names a Filter (or its And) may hold; anything else in it is malformed.
bool known_predicate(std::string_view name, bool in_and)
{
    return name == "Prefix" || name == "Tag" || name == "ObjectSizeGreaterThan" ||
           name == "ObjectSizeLessThan" || (!in_and && name == "And");
}

std::string_view local_name(const pugi::xml_node& node)
{
    std::string_view name = node.name();
    const auto colon = name.find(':');
    return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

/// A Tag of a filter: Key and Value present (MalformedXML otherwise), within S3's rules for a tag
/// (InvalidTag, S3's messages), its key not already in the filter (InvalidRequest).
result<void> read_tag(const pugi::xml_node& node, lifecycle_filter& filter)
{
    const auto key = child(node, "Key");
    const auto value = child(node, "Value");
    if (!key || !value || children(node, "Key").size() > 1 || children(node, "Value").size() > 1)
        return malformed();
    tag t{.key = std::string(text(key)), .value = std::string(text(value))};
    if (!is_storable_text(t.key) || !is_storable_text(t.value))
        return make_error(errc::invalid_tag, "Tags must be valid UTF-8 without NUL");
    if (t.key.empty() || code_points(t.key) > 128)
        return make_error(errc::invalid_tag, "The TagKey you have provided is invalid");
    if (code_points(t.value) > 256)
        return make_error(errc::invalid_tag, "The TagValue you have provided is invalid");
    for (const auto& other : filter.tags)
        if (other.key == t.key)
            return make_error(errc::invalid_request, "Duplicate Tag Keys are not allowed.");
    filter.tags.push_back(std::move(t));
    return ok();
}

/// Reads the predicates of `node` (a Filter or its And) into `filter`.
result<void> read_predicates(const pugi::xml_node& node, bool in_and, lifecycle_filter& filter)
{
    int count = 0;
    for (auto e = node.first_child(); e; e = e.next_sibling()) {
        if (e.type() != pugi::node_element)
            continue;
        const auto name = local_name(e);
        if (!known_predicate(name, in_and))
            return malformed();
        ++count;
        if (name == "Prefix") {
            if (filter.has_prefix)
                return malformed();
            filter.has_prefix = true;
            filter.prefix = text(e);
            if (!is_valid_utf8(filter.prefix) || filter.prefix.size() > 1024)
                return make_error(errc::invalid_argument, "The prefix must be UTF-8 of at most 1024 bytes");
        } else if (name == "Tag") {
            if (auto t = read_tag(e, filter); !t)
                return t;
        } else if (name == "ObjectSizeGreaterThan") {
            if (filter.size_greater_than)
                return malformed();
            auto n = object_size(e, name);
            if (!n)
                return std::move(n).error();
            filter.size_greater_than = *n;
        } else if (name == "ObjectSizeLessThan") {
            if (filter.size_less_than)
                return malformed();
            auto n = object_size(e, name);
            if (!n)
                return std::move(n).error();
            if (*n == 0)
                return make_error(errc::invalid_argument, "ObjectSizeLessThan must be a positive integer");
            filter.size_less_than = *n;
        } else { // And
            filter.shape = lifecycle_filter::form::filter_and;
            if (auto inner = read_predicates(e, true, filter); !inner)
                return inner;
        }
    }
    // A Filter holds one predicate at most (several only inside And); an And holds at least one.
    if ((!in_and && count > 1) || (in_and && count == 0))
        return malformed();
    return ok();
}

std::string generated_id()
{
    // S3 names a rule without ID with a random string of its own.
    return to_hex(random_bytes(16));
}

result<lifecycle_rule> parse_rule(const pugi::xml_node& node)
{
    lifecycle_rule rule;
    if (auto id = child(node, "ID")) {
        rule.id = text(id);
        if (!is_valid_utf8(rule.id))
            return malformed();
        if (code_points(rule.id) > max_lifecycle_rule_id)
            return make_error(errc::invalid_argument, "ID length should not exceed allowed limit of 255");
    }
    if (rule.id.empty())
        rule.id = generated_id();

    const auto status = child(node, "Status");
    if (!status)
        return malformed();
    const std::string status_text(trim(text(status)));
    if (status_text != "Enabled" && status_text != "Disabled")
        return malformed();
    rule.enabled = status_text == "Enabled";

    // Exactly one of Filter and the rule-level Prefix of the first lifecycle API.
    const auto filter = child(node, "Filter");
    const auto legacy = child(node, "Prefix");
    if (bool(filter) == bool(legacy) || children(node, "Filter").size() > 1 ||
        children(node, "Prefix").size() > 1)
        return malformed();
    if (legacy) {
        rule.filter.shape = lifecycle_filter::form::legacy_prefix;
        rule.filter.has_prefix = true;
        rule.filter.prefix = text(legacy);
        if (!is_valid_utf8(rule.filter.prefix) || rule.filter.prefix.size() > 1024)
            return make_error(errc::invalid_argument, "The prefix must be UTF-8 of at most 1024 bytes");
    } else if (auto read = read_predicates(filter, false, rule.filter); !read) {
        return std::move(read).error();
    }
    if (rule.filter.size_greater_than && rule.filter.size_less_than &&
        *rule.filter.size_greater_than >= *rule.filter.size_less_than)
        return make_error(errc::invalid_argument,
                          "ObjectSizeGreaterThan must be less than ObjectSizeLessThan");

    const auto expirations = children(node, "Expiration");
    if (expirations.size() > 1)
        return malformed();
    if (!expirations.empty()) {
        const auto e = expirations.front();
        rule.has_expiration = true;
        const auto days = child(e, "Days");
        const auto date = child(e, "Date");
        const auto marker = child(e, "ExpiredObjectDeleteMarker");
        if (int(bool(days)) + int(bool(date)) + int(bool(marker)) != 1)
            return malformed();
        if (days) {
            auto n = positive_days(days, "'Days' for Expiration action");
            if (!n)
                return std::move(n).error();
            rule.expiration_days = *n;
        } else if (date) {
            const std::string value(trim(text(date)));
            // ISO 8601; a date alone is taken as its midnight.
            auto t = parse_iso8601(value);
            if (!t && value.size() == 10)
                t = parse_iso8601(std::string(value) + "T00:00:00Z");
            if (!t)
                return make_error(errc::invalid_argument, "Invalid date: not in ISO 8601 format");
            if (t->time_since_epoch() % std::chrono::days(1) != time_point::duration::zero())
                return make_error(errc::invalid_argument, "'Date' must be at midnight GMT");
            rule.expiration_date = *t;
        } else {
            const std::string value(trim(text(marker)));
            if (value != "true" && value != "false")
                return malformed();
            rule.expired_object_delete_marker = value == "true";
        }
    }

    const auto noncurrent = children(node, "NoncurrentVersionExpiration");
    if (noncurrent.size() > 1)
        return malformed();
    if (!noncurrent.empty()) {
        const auto days = child(noncurrent.front(), "NoncurrentDays");
        if (!days)
            return malformed();
        auto n = positive_days(days, "'NoncurrentDays' for NoncurrentVersionExpiration action");
        if (!n)
            return std::move(n).error();
        rule.noncurrent_days = *n;
        if (const auto newer = child(noncurrent.front(), "NewerNoncurrentVersions")) {
            auto v = parse_number<long long>(text(newer));
            if (!v)
                return malformed();
            if (*v < 1 || *v > max_newer_noncurrent_versions)
                return make_error(errc::invalid_argument,
                                  "NewerNoncurrentVersions must be an integer between 1 and 100");
            rule.newer_noncurrent_versions = static_cast<int>(*v);
        }
    }

    const auto aborts = children(node, "AbortIncompleteMultipartUpload");
    if (aborts.size() > 1)
        return malformed();
    if (!aborts.empty()) {
        const auto days = child(aborts.front(), "DaysAfterInitiation");
        if (!days)
            return malformed();
        auto n = positive_days(days, "'DaysAfterInitiation' for AbortIncompleteMultipartUpload action");
        if (!n)
            return std::move(n).error();
        rule.abort_days_after_initiation = *n;
    }

    const bool transition = child(node, "Transition") || child(node, "NoncurrentVersionTransition");
    if (!rule.has_expiration && !rule.noncurrent_days && !rule.abort_days_after_initiation && !transition)
        return make_error(errc::invalid_request, "At least one action needs to be specified in a rule");
    const bool tags = !rule.filter.tags.empty();
    if (tags && rule.abort_days_after_initiation)
        return make_error(errc::invalid_request,
                          "AbortIncompleteMultipartUpload cannot be specified with Tags.");
    if (tags && rule.expired_object_delete_marker)
        return make_error(errc::invalid_request, "ExpiredObjectDeleteMarker cannot be specified with Tags.");
    if (transition)
        return make_error(errc::not_implemented,
                          "Lifecycle transitions are not implemented: Depot has one storage class");
    return rule;
}

void write_filter(xml_writer& w, const lifecycle_filter& f)
{
    if (f.shape == lifecycle_filter::form::legacy_prefix) {
        w.element("Prefix", f.prefix);
        return;
    }
    w.open("Filter");
    if (f.shape == lifecycle_filter::form::filter_and)
        w.open("And");
    if (f.has_prefix)
        w.element("Prefix", f.prefix);
    for (const auto& t : f.tags) {
        w.open("Tag");
        w.element("Key", t.key);
        w.element("Value", t.value);
        w.close();
    }
    if (f.size_greater_than)
        w.element("ObjectSizeGreaterThan", *f.size_greater_than);
    if (f.size_less_than)
        w.element("ObjectSizeLessThan", *f.size_less_than);
    if (f.shape == lifecycle_filter::form::filter_and)
        w.close();
    w.close();
}

} // namespace

bool lifecycle_filter::matches(std::string_view key, std::uint64_t size,
                               const std::vector<tag>& object_tags) const
{
    const auto has = [&](const tag& wanted) {
        return std::any_of(object_tags.begin(), object_tags.end(),
                           [&](const tag& t) { return t.key == wanted.key && t.value == wanted.value; });
    };
    return key.starts_with(prefix) && (!size_greater_than || size > *size_greater_than) &&
           (!size_less_than || size < *size_less_than) && std::all_of(tags.begin(), tags.end(), has);
}

result<lifecycle_configuration> parse_lifecycle_configuration(std::string_view body)
{
    pugi::xml_document doc;
    auto root = load(doc, body, "LifecycleConfiguration");
    if (!root)
        return std::move(root).error();
    const auto rules = children(*root, "Rule");
    if (rules.empty() || rules.size() > max_lifecycle_rules)
        return malformed();
    lifecycle_configuration config;
    std::set<std::string> ids;
    for (const auto& node : rules) {
        auto rule = parse_rule(node);
        if (!rule)
            return std::move(rule).error();
        if (!ids.insert(rule->id).second)
            return make_error(errc::invalid_argument,
                              "Rule ID must be unique. Found same ID for more than one rule");
        config.rules.push_back(std::move(*rule));
    }
    return config;
}

std::string lifecycle_configuration_xml(const lifecycle_configuration& config)
{
    xml_writer w;
    w.open("LifecycleConfiguration", s3_xmlns);
    for (const auto& rule : config.rules) {
        w.open("Rule");
        if (rule.has_expiration) {
            w.open("Expiration");
            if (rule.expiration_days)
                w.element("Days", *rule.expiration_days);
            if (rule.expiration_date)
                w.element("Date", format_iso8601(*rule.expiration_date));
            if (rule.expired_object_delete_marker)
                w.element("ExpiredObjectDeleteMarker", *rule.expired_object_delete_marker);
            w.close();
        }
        w.element("ID", rule.id);
        write_filter(w, rule.filter);
        w.element("Status", rule.enabled ? "Enabled" : "Disabled");
        if (rule.noncurrent_days) {
            w.open("NoncurrentVersionExpiration");
            w.element("NoncurrentDays", *rule.noncurrent_days);
            if (rule.newer_noncurrent_versions)
                w.element("NewerNoncurrentVersions", *rule.newer_noncurrent_versions);
            w.close();
        }
        if (rule.abort_days_after_initiation) {
            w.open("AbortIncompleteMultipartUpload");
            w.element("DaysAfterInitiation", *rule.abort_days_after_initiation);
            w.close();
        }
        w.close();
    }
    return std::move(w).finish();
}

time_point lifecycle_cutoff(time_point now, int days, std::chrono::seconds day)
{
    if (day != std::chrono::seconds(86400))
        return now - days * day;
    // S3: due at the first midnight UTC at or after start + days, so due by now iff start + days is at or
    // before today's midnight.
    const auto midnight = std::chrono::floor<std::chrono::days>(now);
    return time_point(midnight) - std::chrono::days(days);
}

} // namespace depot::s3
