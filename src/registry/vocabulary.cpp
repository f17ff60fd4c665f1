#include "registry/vocabulary.hpp"

#include "common/hash.hpp"
#include "common/json.hpp"

#include <algorithm>

namespace depot::registry {

versioning_mode versioning_mode_of(std::string_view stored) noexcept
{
    if (stored == "enabled")
        return versioning_mode::enabled;
    if (stored == "suspended")
        return versioning_mode::suspended;
    return versioning_mode::unversioned;
}

std::string_view to_string(versioning_mode mode) noexcept
{
    switch (mode) {
    case versioning_mode::enabled:
        return "enabled";
    case versioning_mode::suspended:
        return "suspended";
    case versioning_mode::unversioned:
        break;
    }
    return "unversioned";
}

bool is_valid_version_id(std::string_view id) noexcept
{
    if (id == "null")
        return true;
    if (id.size() != 32)
        return false;
    for (char ch : id)
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
            return false;
    // created_seq is a positive bigint.
    return id[0] <= '7' && id.substr(0, 16) != "0000000000000000";
}

bool is_warmup_trigger(std::string_view entry) noexcept
{
    if (entry == "version.approved" || entry == "alias.updated")
        return true;
    constexpr std::string_view prefix = "alias.updated:";
    if (!entry.starts_with(prefix) || entry.size() == prefix.size() || entry.size() > prefix.size() + 63)
        return false;
    for (char ch : entry.substr(prefix.size()))
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
              ch == '_' || ch == '-'))
            return false;
    return true;
}

std::string new_webhook_secret()
{
    return "whsec_" + to_base64(random_bytes(24));
}

std::string webhook_signature(const std::vector<std::string>& secrets, std::string_view id,
                              std::string_view timestamp, std::string_view body)
{
    std::string signed_content;
    signed_content.reserve(id.size() + timestamp.size() + body.size() + 2);
    signed_content.append(id).append(".").append(timestamp).append(".").append(body);
    std::string out;
    for (const auto& s : secrets) {
        std::string_view encoded = s;
        if (encoded.starts_with("whsec_"))
            encoded.remove_prefix(6);
        auto key = from_base64(encoded);
        if (!key)
            continue;
        if (!out.empty())
            out += ' ';
        out += "v1," + to_base64(hmac_sha256(*key, signed_content));
    }
    return out;
}

const audit_context& system_audit_context()
{
    static const audit_context ctx{.actor = "system", .credential = {}, .request_id = {}, .client_addr = {}};
    return ctx;
}

std::string audit_quote(std::string_view s)
{
    return json_quote(s);
}

} // namespace depot::registry

namespace depot::registry::events {

bool is_event_type(std::string_view type) noexcept
{
    return std::find(event_types.begin(), event_types.end(), type) != event_types.end();
}

} // namespace depot::registry::events
