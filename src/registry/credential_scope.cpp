#include "registry/credential_scope.hpp"

#include "registry/sql_util.hpp"

#include <nlohmann/json.hpp>

namespace depot::registry {

result<credential_scope> parse_scope(std::string_view text)
{
    credential_scope s;
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

std::string scope_json(const credential_scope& s)
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

std::optional<scope_area> area_of(const credential_scope& s, const model_location* model)
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

asio::awaitable<std::optional<model_location>> locate_model(pg::pool& pool, std::string_view team,
                                                            std::string_view model)
{
    auto conn = co_await pool.acquire();
    auto rs = co_await sql(*conn,
                           "SELECT m.id, b.name, m.prefix FROM models m JOIN teams t ON t.id = m.team_id "
                           "JOIN buckets b ON b.id = m.bucket_id WHERE t.name = $1 AND m.name = $2",
                           team, model);
    if (rs.empty())
        co_return std::nullopt;
    co_return model_location{.model_id = rs[0].i64(0), .bucket = rs[0].str(1), .prefix = rs[0].str(2)};
}

asio::awaitable<bool> alias_has_file(pg::pool& pool, std::int64_t model_id, std::string_view alias,
                                     std::string_view path)
{
    auto conn = co_await pool.acquire();
    auto rs = co_await sql(*conn,
                           "SELECT 1 FROM model_aliases a JOIN model_files f ON f.version_id = a.version_id "
                           "WHERE a.model_id = $1 AND a.name = $2 AND f.path = $3",
                           model_id, alias, path);
    co_return !rs.empty();
}

} // namespace depot::registry
