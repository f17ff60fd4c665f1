#include "auth/scope.hpp"

#include <nlohmann/json.hpp>

namespace depot::auth {

result<access_scope> parse_scope(std::string_view text)
{
    access_scope s;
    if (text.empty() || text == "null")
        return s;
    auto doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
        return make_error(errc::invalid_argument, "The scope must be a JSON object", "scope");
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        const std::string& name = it.key();
        if (name == "read_only") {
            if (!it->is_boolean())
                return make_error(errc::invalid_argument, "scope.read_only must be true or false", "scope");
            s.read_only = it->get<bool>();
            continue;
        }
        if (name != "bucket" && name != "prefix" && name != "model" && name != "alias")
            return make_error(errc::invalid_argument,
                              "Unknown scope member '" + name +
                                  "' (known: read_only, bucket, prefix, model, alias)",
                              "scope");
        if (!it->is_string() || it->get<std::string>().empty())
            return make_error(errc::invalid_argument, "scope." + name + " must be a non-empty string",
                              "scope");
        auto value = it->get<std::string>();
        if (name == "bucket")
            s.bucket = value;
        else if (name == "prefix")
            s.prefix = value;
        else if (name == "alias")
            s.alias = value;
        else {
            auto slash = value.find('/');
            if (slash == std::string::npos || slash == 0 || slash + 1 == value.size() ||
                value.find('/', slash + 1) != std::string::npos)
                return make_error(errc::invalid_argument, "scope.model must read TEAM/MODEL", "scope");
            s.team = value.substr(0, slash);
            s.model = value.substr(slash + 1);
        }
    }
    if (!s.prefix.empty() && s.bucket.empty())
        return make_error(errc::invalid_argument, "scope.prefix needs scope.bucket", "scope");
    if (!s.alias.empty() && s.model.empty())
        return make_error(errc::invalid_argument, "scope.alias needs scope.model", "scope");
    if (!s.model.empty() && !s.bucket.empty())
        return make_error(errc::invalid_argument, "A scope names a bucket or a model, not both", "scope");
    if (!s.alias.empty())
        s.read_only = true;
    return s;
}

std::string scope_json(const access_scope& s)
{
    if (s.unrestricted())
        return {};
    nlohmann::json j = nlohmann::json::object();
    if (s.read_only)
        j["read_only"] = true;
    if (!s.bucket.empty())
        j["bucket"] = s.bucket;
    if (!s.prefix.empty())
        j["prefix"] = s.prefix;
    if (!s.model.empty())
        j["model"] = s.team + "/" + s.model;
    if (!s.alias.empty())
        j["alias"] = s.alias;
    return j.dump();
}

std::optional<scope_area> area_of(const access_scope& s, const model_location* model)
{
    if (!s.model.empty()) {
        if (!model)
            return scope_area{};
        return scope_area{.bucket = model->bucket, .prefix = model->prefix};
    }
    if (!s.bucket.empty())
        return scope_area{.bucket = s.bucket, .prefix = s.prefix};
    return std::nullopt;
}

bool area_reaches(const scope_area& area, std::string_view bucket, std::string_view key_prefix)
{
    return !area.bucket.empty() && bucket == area.bucket && key_prefix.starts_with(area.prefix);
}

bool alias_reads_frozen_file(std::string_view operation, bool version_id_given)
{
    return !version_id_given && (operation == "GetObject" || operation == "HeadObject");
}

} // namespace depot::auth
