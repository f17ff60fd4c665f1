#include "s3/cors.hpp"

#include "s3/utf8.hpp"
#include "s3/xml.hpp"
#include "s3/xml_read.hpp"

#include <algorithm>
#include <array>

namespace depot::s3 {

using namespace xml_read;

namespace {

constexpr std::array<std::string_view, 5> cors_methods = {"GET", "PUT", "POST", "DELETE", "HEAD"};

/// Visible ASCII only: what may be copied into a response header as it is.
bool is_visible_ascii(std::string_view s) noexcept
{
    return std::all_of(s.begin(), s.end(), [](char c) { return c > 0x20 && c < 0x7F; });
}

/// An HTTP token (RFC 9110 tchar): a header name a preflight may list.
bool is_token(std::string_view s) noexcept
{
    constexpr std::string_view specials = "!#$%&'*+-.^_`|~";
    return !s.empty() && std::all_of(s.begin(), s.end(), [&](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               specials.find(c) != std::string_view::npos;
    });
}

char lower(char c) noexcept
{
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool equal(std::string_view a, std::string_view b, bool fold_case) noexcept
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [&](char x, char y) {
               return fold_case ? lower(x) == lower(y) : x == y;
           });
}

/// The items of a comma-separated header value, trimmed, empty ones skipped.
std::vector<std::string_view> split_list(std::string_view list)
{
    std::vector<std::string_view> out;
    while (!list.empty()) {
        const auto comma = list.find(',');
        const auto item = trim(list.substr(0, comma));
        if (!item.empty())
            out.push_back(item);
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    }
    return out;
}

std::string join(const std::vector<std::string>& items)
{
    std::string out;
    for (const auto& i : items) {
        if (!out.empty())
            out += ", ";
        out += i;
    }
    return out;
}

/// A pattern (AllowedOrigin, AllowedHeader) as S3 accepts it: one wildcard at most, header-safe bytes.
result<std::string> pattern_value(const pugi::xml_node& node, std::string_view element)
{
    std::string value(trim(text(node)));
    if (value.empty())
        return malformed();
    if (std::count(value.begin(), value.end(), '*') > 1)
        return make_error(errc::invalid_request,
                          std::string(element) + " \"" + value + "\" can not have more than one wildcard.");
    if (!is_visible_ascii(value))
        return make_error(errc::invalid_request, std::string(element) +
                                                     " may only hold visible ASCII characters (no spaces or "
                                                     "control characters)");
    return value;
}

bool origin_allowed(const cors_rule& rule, std::string_view origin)
{
    return std::any_of(rule.allowed_origins.begin(), rule.allowed_origins.end(),
                       [&](const std::string& p) { return cors_wildcard_match(p, origin, false); });
}

bool wildcard_origin(const cors_rule& rule)
{
    return std::find(rule.allowed_origins.begin(), rule.allowed_origins.end(), "*") !=
           rule.allowed_origins.end();
}

void add_common(std::vector<cors_header>& out, const cors_rule& rule, std::string_view origin)
{
    const bool any = wildcard_origin(rule);
    out.emplace_back("Access-Control-Allow-Origin", any ? std::string("*") : std::string(origin));
    out.emplace_back("Access-Control-Allow-Methods", join(rule.allowed_methods));
    if (!any)
        out.emplace_back("Access-Control-Allow-Credentials", "true");
    if (!rule.expose_headers.empty())
        out.emplace_back("Access-Control-Expose-Headers", join(rule.expose_headers));
    if (rule.max_age_seconds)
        out.emplace_back("Access-Control-Max-Age", std::to_string(*rule.max_age_seconds));
}

} // namespace

result<cors_configuration> parse_cors_configuration(std::string_view body)
{
    pugi::xml_document doc;
    auto root = load(doc, body, "CORSConfiguration");
    if (!root)
        return std::move(root).error();
    const auto rules = children(*root, "CORSRule");
    if (rules.empty() || rules.size() > max_cors_rules)
        return malformed();
    cors_configuration config;
    for (const auto& node : rules) {
        cors_rule rule;
        if (auto id = child(node, "ID")) {
            rule.id = text(id);
            if (!is_valid_utf8(rule.id) || code_points(rule.id) > 255)
                return make_error(errc::invalid_request,
                                  "A CORS rule ID must be UTF-8 of at most 255 characters");
        }
        for (const auto& m : children(node, "AllowedMethod")) {
            const std::string method(trim(text(m)));
            if (std::find(cors_methods.begin(), cors_methods.end(), method) == cors_methods.end())
                return make_error(errc::invalid_request,
                                  "Found unsupported HTTP method in CORS config. Unsupported method is " +
                                      (is_visible_ascii(method) ? method : std::string("(not printable)")));
            if (std::find(rule.allowed_methods.begin(), rule.allowed_methods.end(), method) ==
                rule.allowed_methods.end())
                rule.allowed_methods.push_back(method);
        }
        for (const auto& o : children(node, "AllowedOrigin")) {
            auto origin = pattern_value(o, "AllowedOrigin");
            if (!origin)
                return std::move(origin).error();
            rule.allowed_origins.push_back(std::move(*origin));
        }
        for (const auto& h : children(node, "AllowedHeader")) {
            auto header = pattern_value(h, "AllowedHeader");
            if (!header)
                return std::move(header).error();
            rule.allowed_headers.push_back(std::move(*header));
        }
        for (const auto& e : children(node, "ExposeHeader")) {
            std::string header(trim(text(e)));
            if (!is_token(header))
                return make_error(errc::invalid_request, "ExposeHeader must be a header name");
            rule.expose_headers.push_back(std::move(header));
        }
        if (auto age = child(node, "MaxAgeSeconds")) {
            rule.max_age_seconds = parse_int(trim(text(age)));
            if (!rule.max_age_seconds)
                return malformed();
        }
        if (rule.allowed_methods.empty() || rule.allowed_origins.empty())
            return malformed();
        config.rules.push_back(std::move(rule));
    }
    return config;
}

std::string cors_configuration_xml(const cors_configuration& config)
{
    xml_writer w;
    w.open("CORSConfiguration", s3_xmlns);
    for (const auto& rule : config.rules) {
        w.open("CORSRule");
        w.element_if("ID", rule.id);
        for (const auto& h : rule.allowed_headers)
            w.element("AllowedHeader", h);
        for (const auto& m : rule.allowed_methods)
            w.element("AllowedMethod", m);
        for (const auto& o : rule.allowed_origins)
            w.element("AllowedOrigin", o);
        for (const auto& e : rule.expose_headers)
            w.element("ExposeHeader", e);
        if (rule.max_age_seconds)
            w.element("MaxAgeSeconds", *rule.max_age_seconds);
        w.close();
    }
    return std::move(w).finish();
}

bool cors_wildcard_match(std::string_view pattern, std::string_view value, bool fold_case)
{
    const auto star = pattern.find('*');
    if (star == std::string_view::npos)
        return equal(pattern, value, fold_case);
    const auto head = pattern.substr(0, star);
    const auto tail = pattern.substr(star + 1);
    return value.size() >= head.size() + tail.size() &&
           equal(value.substr(0, head.size()), head, fold_case) &&
           equal(value.substr(value.size() - tail.size()), tail, fold_case);
}

const cors_rule* find_cors_rule(const cors_configuration& config, std::string_view origin,
                                std::string_view method, std::string_view request_headers)
{
    // What is echoed must be safe to echo: an origin of visible ASCII, header names that are tokens.
    if (origin.empty() || !is_visible_ascii(origin))
        return nullptr;
    const auto headers = split_list(request_headers);
    if (!std::all_of(headers.begin(), headers.end(), is_token))
        return nullptr;
    for (const auto& rule : config.rules) {
        if (std::find(rule.allowed_methods.begin(), rule.allowed_methods.end(), method) ==
                rule.allowed_methods.end() ||
            !origin_allowed(rule, origin))
            continue;
        const bool headers_allowed = std::all_of(headers.begin(), headers.end(), [&](std::string_view h) {
            return std::any_of(rule.allowed_headers.begin(), rule.allowed_headers.end(),
                               [&](const std::string& p) { return cors_wildcard_match(p, h, true); });
        });
        if (headers_allowed)
            return &rule;
    }
    return nullptr;
}

std::vector<cors_header> cors_preflight_headers(const cors_rule& rule, std::string_view origin,
                                                std::string_view request_headers)
{
    std::vector<cors_header> out;
    add_common(out, rule, origin);
    std::string allow;
    for (auto h : split_list(request_headers)) {
        if (!allow.empty())
            allow += ", ";
        for (char c : h)
            allow.push_back(lower(c));
    }
    if (!allow.empty())
        out.emplace_back("Access-Control-Allow-Headers", std::move(allow));
    out.emplace_back("Vary", "Origin, Access-Control-Request-Headers, Access-Control-Request-Method");
    return out;
}

std::vector<cors_header> cors_response_headers(const cors_rule& rule, std::string_view origin)
{
    std::vector<cors_header> out;
    add_common(out, rule, origin);
    out.emplace_back("Vary", "Origin, Access-Control-Request-Headers, Access-Control-Request-Method");
    return out;
}

} // namespace depot::s3
