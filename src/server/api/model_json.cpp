// The model registry's JSON (server/api/model_json.hpp).
#include "server/api/model_json.hpp"

#include "common/hash.hpp"

#include <boost/json/parse.hpp>

namespace depot::server::api {

using registry::team_role;

json::object policy_json(const registry::approval_policy& p)
{
    json::array aliases;
    for (const auto& a : p.protected_aliases)
        aliases.push_back(json::string(a));
    return json::object{{"required_approvals", p.required_approvals},
                        {"approver_role", to_string(p.approver_role)},
                        {"protected_aliases", std::move(aliases)},
                        {"four_eyes", registry::to_string(p.four_eyes)}};
}

json::object team_json(const registry::team& t, std::optional<team_role> role)
{
    json::object o{{"name", t.name},
                   {"created_at", iso8601(t.created_at)},
                   {"default_policy", policy_json(t.default_policy)}};
    o["role"] = role ? json::value(json::string(to_string(*role))) : json::value(nullptr);
    return o;
}

json::object member_json(const registry::team_member& m)
{
    return json::object{{"user", m.user_id},
                        {"display_name", m.display_name},
                        {"role", to_string(m.role)},
                        {"added_at", iso8601(m.added_at)}};
}

json::object model_json(const registry::model& m)
{
    json::object o{{"team", m.team},
                   {"name", m.name},
                   {"bucket", m.bucket},
                   {"prefix", m.prefix},
                   {"description", m.description},
                   {"policy", policy_json(m.policy)},
                   {"version_count", m.version_count},
                   {"revision", m.revision},
                   {"created_by", m.created_by},
                   {"created_at", iso8601(m.created_at)},
                   {"updated_at", iso8601(m.updated_at)}};
    return o;
}

json::value parse_stored(const std::string& text)
{
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    return ec ? json::value(json::object()) : v;
}

json::object version_json(const registry::model& m, const registry::model_version& v)
{
    json::array aliases, approvals;
    for (const auto& a : v.aliases)
        aliases.push_back(json::string(a));
    for (const auto& a : v.approvals)
        approvals.push_back(json::string(a));
    json::object o{{"team", m.team},
                   {"model", m.name},
                   {"number", v.number},
                   {"state", v.state},
                   {"description", v.description},
                   {"framework", v.framework},
                   {"format", v.format},
                   {"run_url", v.run_url},
                   {"labels", parse_stored(v.labels_json)},
                   {"metrics", parse_stored(v.metrics_json)},
                   {"file_count", v.file_count},
                   {"total_bytes", v.total_bytes},
                   {"created_by", v.created_by},
                   {"created_at", iso8601(v.created_at)},
                   {"aliases", std::move(aliases)},
                   {"approvals", std::move(approvals)},
                   {"required_approvals", m.policy.required_approvals}};
    o["label"] = v.label ? json::value(json::string(*v.label)) : json::value(nullptr);
    o["parent"] = v.parent ? json::value(*v.parent) : json::value(nullptr);
    o["submitted_by"] =
        v.submitted_by.empty() ? json::value(nullptr) : json::value(json::string(v.submitted_by));
    return o;
}

json::object file_json(const registry::model_file& f)
{
    json::object o{
        {"path", f.path}, {"size", f.size}, {"sha256", to_hex(f.sha256)}, {"etag", "\"" + f.etag + "\""}};
    if (f.content_type)
        o["content_type"] = *f.content_type;
    return o;
}

json::object alias_json(const registry::model& m, const registry::model_alias& a)
{
    return json::object{{"name", a.name},
                        {"version", a.version},
                        {"protected", m.policy.protects(a.name)},
                        {"updated_by", a.updated_by},
                        {"updated_at", iso8601(a.updated_at)},
                        {"etag", registry::alias_etag(a)}};
}

json::object event_json(const registry::model_event& e)
{
    json::object o{{"id", e.id},
                   {"action", e.action},
                   {"actor", e.actor},
                   {"comment", e.comment},
                   {"details", parse_stored(e.details_json)},
                   {"at", iso8601(e.at)}};
    o["version"] = e.version ? json::value(*e.version) : json::value(nullptr);
    o["from_state"] = e.from_state ? json::value(json::string(*e.from_state)) : json::value(nullptr);
    o["to_state"] = e.to_state ? json::value(json::string(*e.to_state)) : json::value(nullptr);
    return o;
}

std::string model_etag(const registry::model& m)
{
    return "\"r" + std::to_string(m.revision) + "\"";
}

response with_etag(response res, const registry::model& m)
{
    res.headers.set(http::field::etag, model_etag(m));
    return res;
}

} // namespace depot::server::api
