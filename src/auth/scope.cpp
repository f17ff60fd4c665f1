#include "auth/scope.hpp"

#include "auth/scope_alias.hpp"
#include "common/json.hpp"

namespace depot::auth {

result<access_scope> parse_scope(std::string_view text)
{
    access_scope s;
    if (text.empty() || text == "null")
        return s;
    auto doc = json_parse(text);
    if (!doc || !doc->is_object())
        return make_error(errc::invalid_argument, "The scope must be a JSON object", "scope");
    for (const auto& member : doc->get_object()) {
        const std::string name(member.key());
        const auto& v = member.value();
        if (name == "read_only") {
            if (!v.is_bool())
                return make_error(errc::invalid_argument, "scope.read_only must be true or false", "scope");
            s.read_only = v.get_bool();
            continue;
        }
        if (name == "alias_id") {
            // The alias's identity (auth/scope_alias.hpp); the registry assigns and checks it.
            if (!v.is_int64() || v.get_int64() < 0)
                return make_error(errc::invalid_argument, "scope.alias_id must be a non-negative integer",
                                  "scope");
            if (!doc->get_object().contains("alias"))
                return make_error(errc::invalid_argument, "scope.alias_id needs scope.alias", "scope");
            continue;
        }
        if (name != "bucket" && name != "prefix" && name != "model" && name != "alias")
            return make_error(errc::invalid_argument,
                              "Unknown scope member '" + name +
                                  "' (known: read_only, bucket, prefix, model, alias, alias_id)",
                              "scope");
        if (!v.is_string() || v.get_string().empty())
            return make_error(errc::invalid_argument, "scope." + name + " must be a non-empty string",
                              "scope");
        std::string value(v.get_string());
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
    // Members in name order: the stored text stays what earlier releases wrote.
    boost::json::object j;
    if (!s.alias.empty())
        j["alias"] = json_string(s.alias);
    if (!s.bucket.empty())
        j["bucket"] = json_string(s.bucket);
    if (!s.model.empty())
        j["model"] = json_string(s.team + "/" + s.model);
    if (!s.prefix.empty())
        j["prefix"] = json_string(s.prefix);
    if (s.read_only)
        j["read_only"] = true;
    return boost::json::serialize(j);
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

std::int64_t scope_alias_id(std::string_view scope_json)
{
    if (scope_json.empty())
        return 0;
    auto doc = json_parse(scope_json);
    if (!doc || !doc->is_object())
        return 0;
    const auto* v = doc->get_object().if_contains("alias_id");
    return v && v->is_int64() && v->get_int64() > 0 ? v->get_int64() : 0;
}

} // namespace depot::auth
