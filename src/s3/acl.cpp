#include "s3/acl.hpp"

#include "common/strings.hpp"
#include "s3/utf8.hpp"
#include "s3/xml.hpp"
#include "s3/xml_read.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace depot::s3 {
namespace {

using namespace xml_read;

constexpr std::array<std::pair<std::string_view, acl_permission>, 5> permission_names = {{
    {"READ", acl_permission::read},
    {"WRITE", acl_permission::write},
    {"READ_ACP", acl_permission::read_acp},
    {"WRITE_ACP", acl_permission::write_acp},
    {"FULL_CONTROL", acl_permission::full_control},
}};

std::optional<acl_permission> permission_of(std::string_view name)
{
    for (const auto& [n, p] : permission_names)
        if (n == name)
            return p;
    return std::nullopt;
}

std::string_view name_of(acl_permission p)
{
    for (const auto& [n, q] : permission_names)
        if (q == p)
            return n;
    return "READ";
}

/// A user id as Depot accepts them (schema 0001: users.id); anything else cannot name a user.
bool is_user_id(std::string_view id)
{
    if (id.empty() || id.size() > 128 || !std::isalnum(static_cast<unsigned char>(id.front())))
        return false;
    return std::all_of(id.begin(), id.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '@' || c == '-';
    });
}

error malformed_acl()
{
    return make_error(errc::malformed_acl,
                      "The XML you provided was not well-formed or did not validate against our published "
                      "schema");
}

void add_grant(access_control_list& acl, acl_grant g)
{
    if (std::find(acl.grants.begin(), acl.grants.end(), g) == acl.grants.end())
        acl.grants.push_back(std::move(g));
}

result<acl_grant> group_grant(std::string_view uri, acl_permission p, std::string_view argument)
{
    if (uri == all_users_uri)
        return acl_grant{.type = grantee_type::all_users, .permission = p};
    if (uri == authenticated_users_uri)
        return acl_grant{.type = grantee_type::authenticated_users, .permission = p};
    return make_error(errc::invalid_argument, "Invalid group uri", std::string(argument));
}

/// The xsi:type attribute of a Grantee, whatever the prefix it is bound to.
std::string_view grantee_type_attribute(const pugi::xml_node& grantee)
{
    for (auto a = grantee.first_attribute(); a; a = a.next_attribute()) {
        std::string_view name = a.name();
        if (name == "type" || (name.size() > 5 && name.ends_with(":type")))
            return a.value();
    }
    return {};
}

} // namespace

result<canned_acl> canned_acl_of(std::string_view name, std::string_view argument)
{
    constexpr std::array<std::pair<std::string_view, canned_acl>, 6> names = {{
        {"private", canned_acl::private_acl},
        {"public-read", canned_acl::public_read},
        {"public-read-write", canned_acl::public_read_write},
        {"authenticated-read", canned_acl::authenticated_read},
        {"bucket-owner-read", canned_acl::bucket_owner_read},
        {"bucket-owner-full-control", canned_acl::bucket_owner_full_control},
    }};
    for (const auto& [n, c] : names)
        if (n == name)
            return c;
    if (name == "aws-exec-read" || name == "log-delivery-write")
        return make_error(errc::not_implemented, "The canned ACL " + std::string(name) +
                                                     " is not implemented: Depot has no " +
                                                     (name == "aws-exec-read" ? "EC2" : "log delivery"));
    return make_error(errc::invalid_argument, "Invalid canned ACL value", std::string(argument));
}

access_control_list canned_grants(canned_acl acl, std::string_view owner_id, std::string_view bucket_owner_id,
                                  bool for_object)
{
    access_control_list out;
    add_grant(out, {.type = grantee_type::user,
                    .id = std::string(owner_id),
                    .permission = acl_permission::full_control});
    switch (acl) {
    case canned_acl::private_acl:
        break;
    case canned_acl::public_read_write:
        add_grant(out, {.type = grantee_type::all_users, .permission = acl_permission::read});
        add_grant(out, {.type = grantee_type::all_users, .permission = acl_permission::write});
        break;
    case canned_acl::public_read:
        add_grant(out, {.type = grantee_type::all_users, .permission = acl_permission::read});
        break;
    case canned_acl::authenticated_read:
        add_grant(out, {.type = grantee_type::authenticated_users, .permission = acl_permission::read});
        break;
    case canned_acl::bucket_owner_read:
    case canned_acl::bucket_owner_full_control:
        if (for_object && bucket_owner_id != owner_id)
            add_grant(out,
                      {.type = grantee_type::user,
                       .id = std::string(bucket_owner_id),
                       .permission = acl == canned_acl::bucket_owner_read ? acl_permission::read
                                                                          : acl_permission::full_control});
        break;
    }
    return out;
}

result<void> parse_grant_header(std::string_view value, acl_permission permission, std::string_view header,
                                access_control_list& out)
{
    const auto invalid = [&] {
        return make_error(errc::invalid_argument, "Invalid grant", std::string(header));
    };
    if (trim_ows(value).empty())
        return invalid();
    while (!value.empty()) {
        // key=value or key="value"; values are user ids and URIs, which hold no comma or quote.
        auto comma = value.find(',');
        std::string_view item = trim_ows(value.substr(0, comma));
        value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
        auto eq = item.find('=');
        if (eq == std::string_view::npos)
            return invalid();
        std::string_view key = trim_ows(item.substr(0, eq));
        std::string_view v = trim_ows(item.substr(eq + 1));
        if (v.size() >= 2 && v.front() == '"' && v.back() == '"')
            v = v.substr(1, v.size() - 2);
        if (v.find('"') != std::string_view::npos)
            return invalid();
        if (iequals_ascii(key, "emailAddress")) {
            if (v.empty())
                return invalid();
            add_grant(out, {.type = grantee_type::user, .permission = permission, .email = std::string(v)});
        } else if (iequals_ascii(key, "id")) {
            if (!is_user_id(v))
                return make_error(errc::invalid_argument, "Invalid id", std::string(header));
            add_grant(out, {.type = grantee_type::user, .id = std::string(v), .permission = permission});
        } else if (iequals_ascii(key, "uri")) {
            auto g = group_grant(v, permission, header);
            if (!g)
                return std::move(g).error();
            add_grant(out, std::move(*g));
        } else {
            return invalid();
        }
        if (out.grants.size() > max_acl_grants)
            return make_error(errc::invalid_argument,
                              "An ACL holds at most " + std::to_string(max_acl_grants) + " grants",
                              std::string(header));
    }
    return ok();
}

result<access_control_policy> parse_access_control_policy(std::string_view body)
{
    if (body.size() > max_acl_body)
        return malformed_acl();
    pugi::xml_document doc;
    auto root = load(doc, body, "AccessControlPolicy");
    if (!root)
        return malformed_acl();
    access_control_policy out;
    auto owner = child(*root, "Owner");
    out.owner_id = std::string(trim(text(child(owner, "ID"))));
    if (!owner || out.owner_id.empty())
        return malformed_acl();
    auto list = child(*root, "AccessControlList");
    if (!list)
        return malformed_acl();
    const auto grants = children(list, "Grant");
    if (grants.size() > max_acl_grants)
        return malformed_acl();
    for (const auto& node : grants) {
        auto grantee = child(node, "Grantee");
        auto permission = permission_of(trim(text(child(node, "Permission"))));
        if (!grantee || !permission)
            return malformed_acl();
        std::string_view type = grantee_type_attribute(grantee);
        auto id = child(grantee, "ID");
        auto uri = child(grantee, "URI");
        auto email = child(grantee, "EmailAddress");
        if (type.empty())
            type = id ? "CanonicalUser" : uri ? "Group" : email ? "AmazonCustomerByEmail" : "";
        if (type == "CanonicalUser" && id) {
            const std::string user(trim(text(id)));
            if (!is_user_id(user))
                return make_error(errc::invalid_argument, "Invalid id", "CanonicalUser/ID");
            add_grant(out.acl, {.type = grantee_type::user, .id = user, .permission = *permission});
        } else if (type == "Group" && uri) {
            auto g = group_grant(trim(text(uri)), *permission, "Group/URI");
            if (!g)
                return std::move(g).error();
            add_grant(out.acl, std::move(*g));
        } else if (type == "AmazonCustomerByEmail" && email) {
            const std::string address(trim(text(email)));
            if (address.empty())
                return malformed_acl();
            add_grant(out.acl, {.type = grantee_type::user, .permission = *permission, .email = address});
        } else {
            return malformed_acl();
        }
    }
    return out;
}

std::string access_control_policy_xml(const access_control_list& acl, std::string_view owner_id,
                                      std::string_view owner_display_name)
{
    // Written by hand: Grantee needs the xsi:type attribute, which clients such as s3cmd require.
    std::string doc = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<AccessControlPolicy xmlns=\"";
    doc += s3_xmlns;
    doc += "\"><Owner><ID>";
    append_xml_escaped(doc, owner_id);
    doc += "</ID><DisplayName>";
    append_xml_escaped(doc, owner_display_name);
    doc += "</DisplayName></Owner><AccessControlList>";
    for (const auto& g : acl.grants) {
        doc += "<Grant><Grantee xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:type=\"";
        if (g.type == grantee_type::user) {
            doc += "CanonicalUser\"><ID>";
            append_xml_escaped(doc, g.id);
            doc += "</ID>";
            if (g.id == owner_id) {
                doc += "<DisplayName>";
                append_xml_escaped(doc, owner_display_name);
                doc += "</DisplayName>";
            }
        } else {
            doc += "Group\"><URI>";
            doc += g.type == grantee_type::all_users ? all_users_uri : authenticated_users_uri;
            doc += "</URI>";
        }
        doc += "</Grantee><Permission>";
        doc += name_of(g.permission);
        doc += "</Permission></Grant>";
    }
    doc += "</AccessControlList></AccessControlPolicy>";
    return doc;
}

std::string stored_acl(const access_control_list& acl)
{
    std::string out;
    for (const auto& g : acl.grants) {
        out += name_of(g.permission);
        out += g.type == grantee_type::user ? " u " : g.type == grantee_type::all_users ? " all" : " auth";
        if (g.type == grantee_type::user)
            out += g.id;
        out += '\n';
    }
    return out;
}

access_control_list acl_from_stored(std::string_view stored)
{
    access_control_list out;
    while (!stored.empty()) {
        auto nl = stored.find('\n');
        std::string_view line = stored.substr(0, nl);
        stored = nl == std::string_view::npos ? std::string_view() : stored.substr(nl + 1);
        auto space = line.find(' ');
        auto permission = permission_of(line.substr(0, std::min(space, line.size())));
        if (space == std::string_view::npos || !permission)
            return {};
        std::string_view rest = line.substr(space + 1);
        if (rest == "all")
            out.grants.push_back({.type = grantee_type::all_users, .permission = *permission});
        else if (rest == "auth")
            out.grants.push_back({.type = grantee_type::authenticated_users, .permission = *permission});
        else if (rest.starts_with("u ") && is_user_id(rest.substr(2)))
            out.grants.push_back(
                {.type = grantee_type::user, .id = std::string(rest.substr(2)), .permission = *permission});
        else
            return {};
    }
    return out;
}

bool is_public(const access_control_list& acl) noexcept
{
    return std::any_of(acl.grants.begin(), acl.grants.end(),
                       [](const acl_grant& g) { return g.type != grantee_type::user; });
}

bool grants_to_others(const access_control_list& acl, std::string_view owner_id) noexcept
{
    return std::any_of(acl.grants.begin(), acl.grants.end(),
                       [&](const acl_grant& g) { return g.type == grantee_type::user && g.id != owner_id; });
}

acl_rights rights_of(const access_control_list& acl, std::string_view user_id) noexcept
{
    acl_rights out;
    for (const auto& g : acl.grants) {
        const auto bits = static_cast<std::uint8_t>(g.permission);
        switch (g.type) {
        case grantee_type::user:
            if (!user_id.empty() && g.id == user_id)
                out.user |= bits;
            break;
        case grantee_type::all_users:
            out.all_users |= bits;
            break;
        case grantee_type::authenticated_users:
            out.authenticated_users |= bits;
            break;
        }
    }
    return out;
}

namespace {
constexpr std::array<std::string_view, 4> block_names = {"BlockPublicAcls", "IgnorePublicAcls",
                                                         "BlockPublicPolicy", "RestrictPublicBuckets"};
} // namespace

result<std::string> parse_public_access_block(std::string_view body)
{
    pugi::xml_document doc;
    auto root = load(doc, body, "PublicAccessBlockConfiguration");
    if (!root)
        return std::move(root).error();
    std::string flags;
    for (auto name : block_names) {
        auto node = child(*root, name);
        const std::string value = node ? text(node) : std::string("false");
        const std::string_view v = trim(value);
        if (v != "true" && v != "false")
            return malformed();
        flags += v == "true" ? '1' : '0';
    }
    return flags;
}

std::string public_access_block_xml(std::string_view flags)
{
    xml_writer w;
    w.open("PublicAccessBlockConfiguration", s3_xmlns);
    for (std::size_t i = 0; i < block_names.size(); ++i)
        w.element(block_names[i], i < flags.size() && flags[i] == '1');
    return std::move(w).finish();
}

bool is_object_ownership(std::string_view value) noexcept
{
    return value == "BucketOwnerEnforced" || value == "BucketOwnerPreferred" || value == "ObjectWriter";
}

result<std::string> parse_ownership_controls(std::string_view body)
{
    pugi::xml_document doc;
    auto root = load(doc, body, "OwnershipControls");
    if (!root)
        return std::move(root).error();
    const auto rules = children(*root, "Rule");
    if (rules.size() != 1)
        return malformed();
    std::string value(trim(text(child(rules[0], "ObjectOwnership"))));
    if (!is_object_ownership(value))
        return malformed();
    return value;
}

std::string ownership_controls_xml(std::string_view ownership)
{
    xml_writer w;
    w.open("OwnershipControls", s3_xmlns).open("Rule").element("ObjectOwnership", ownership);
    return std::move(w).finish();
}

} // namespace depot::s3
