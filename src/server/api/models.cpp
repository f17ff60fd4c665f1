// REST handlers of the model registry: teams and members, models, versions (manifest, diff, approval
// workflow, history) and aliases. Authorization: the route's permission on the team of the path
// (server/authorization.hpp authorize_team; the rules in auth/authorize.hpp).
#include "common/hash.hpp"
#include "registry/model_registry.hpp"
#include "s3/listing.hpp"
#include "s3/names.hpp"
#include "server/api/http_api.hpp"
#include "server/api/paging.hpp"
#include "server/authorization.hpp"
#include "server/services.hpp"
#include "server/webhooks/manifest.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <set>

namespace depot::server::api {
namespace {

using registry::team_role;

/// The name patterns of schema/0005_models.sql (checked here first for a precise error).
enum class name_kind
{
    team,  ///< ^[a-z0-9][a-z0-9._-]{0,62}$
    model, ///< ^[a-z0-9][a-z0-9._-]{0,127}$
    alias, ///< ^[A-Za-z][A-Za-z0-9._-]{0,62}$
    label, ///< ^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$, not only digits
};

bool valid_name(std::string_view s, name_kind kind)
{
    const std::size_t max = kind == name_kind::model || kind == name_kind::label ? 128 : 63;
    if (s.empty() || s.size() > max)
        return false;
    auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
    auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    const bool cased = kind == name_kind::alias || kind == name_kind::label;
    auto alnum = [&](char c) { return lower(c) || digit(c) || (cased && upper(c)); };
    if (kind == name_kind::alias ? !(lower(s[0]) || upper(s[0])) : !alnum(s[0]))
        return false;
    bool only_digits = true;
    for (char c : s) {
        only_digits = only_digits && digit(c);
        if (!(alnum(c) || c == '.' || c == '_' || c == '-' || (kind == name_kind::label && c == '+')))
            return false;
    }
    return !(kind == name_kind::label && only_digits);
}

json::object policy_json(const registry::approval_policy& p)
{
    json::array aliases;
    for (const auto& a : p.protected_aliases)
        aliases.push_back(json::string(a));
    return json::object{{"required_approvals", p.required_approvals},
                        {"approver_role", to_string(p.approver_role)},
                        {"protected_aliases", std::move(aliases)}};
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

/// A cursor that holds a number (a version number or an event id); 0 for the first page.
result<std::int64_t> numeric_cursor(const page_request& p)
{
    std::int64_t n = 0;
    for (char c : p.cursor) {
        if (c < '0' || c > '9' || n > INT32_MAX)
            return make_error(errc::invalid_argument, "cursor is not one this API returned", "cursor");
        n = n * 10 + (c - '0');
    }
    return n;
}

/// A page of `rows` fetched with limit + 1: the extra row only tells that more follow.
template <class Row, class Render, class Position>
response page_response(std::vector<Row> rows, std::size_t limit, Render render, Position position)
{
    std::optional<std::string> next;
    if (rows.size() > limit) {
        rows.resize(limit);
        next = position(rows.back());
    }
    json::array items;
    for (const auto& r : rows)
        items.push_back(render(r));
    return list_response(std::move(items), next);
}

/// The team named in the path, if the caller may do the route's permission in it (authorize_team).
asio::awaitable<result<team_access>> team_for(request_context& ctx, const path_params& params)
{
    return authorize_team(ctx, ctx.permission, path_param(params, "team"));
}

struct model_access
{
    team_access team;
    registry::model model;
};

asio::awaitable<result<model_access>> model_for(request_context& ctx, const path_params& params)
{
    auto t = co_await team_for(ctx, params);
    if (!t)
        co_return std::move(t).error();
    auto m = co_await ctx.svc->models.get_model(t->team.id, path_param(params, "model"));
    if (!m)
        co_return std::move(m).error();
    co_return model_access{std::move(*t), std::move(*m)};
}

struct version_access
{
    model_access model;
    registry::model_version version;
};

asio::awaitable<result<version_access>> version_for(request_context& ctx, const path_params& params)
{
    auto m = co_await model_for(ctx, params);
    if (!m)
        co_return std::move(m).error();
    auto v = co_await ctx.svc->models.get_version(m->model, path_param(params, "version"), true);
    if (!v)
        co_return std::move(v).error();
    co_return version_access{std::move(*m), std::move(*v)};
}

result<team_role> role_field(const json::object& o, std::string_view name)
{
    auto s = string_field(o, name);
    if (!s)
        return std::move(s).error();
    auto r = registry::team_role_of(*s);
    if (!r)
        return make_error(errc::invalid_argument,
                          "The field '" + std::string(name) + "' must be reader, writer, maintainer or admin",
                          std::string(name));
    return *r;
}

/// The policy members present in `o` (each optional).
result<registry::policy_override> policy_fields(const json::object& o)
{
    if (auto only = only_fields(o, {"required_approvals", "approver_role", "protected_aliases"}); !only)
        return std::move(only).error();
    registry::policy_override p;
    if (o.contains("required_approvals")) {
        auto n = integer_field(o, "required_approvals", 1, 10);
        if (!n)
            return std::move(n).error();
        p.required_approvals = static_cast<int>(*n);
    }
    if (o.contains("approver_role")) {
        auto r = role_field(o, "approver_role");
        if (!r)
            return std::move(r).error();
        p.approver_role = *r;
    }
    if (o.contains("protected_aliases")) {
        const auto& v = o.at("protected_aliases");
        if (!v.is_array())
            return make_error(errc::invalid_argument, "protected_aliases must be an array of alias names");
        std::vector<std::string> names;
        for (const auto& a : v.as_array()) {
            if (!a.is_string() || !valid_name(a.as_string(), name_kind::alias))
                return make_error(errc::invalid_argument,
                                  "protected_aliases must be an array of alias names");
            names.emplace_back(a.as_string());
        }
        p.protected_aliases = std::move(names);
    }
    return p;
}

result<registry::policy_override> optional_policy(const json::object& body)
{
    auto it = body.find("policy");
    if (it == body.end())
        return registry::policy_override{};
    if (!it->value().is_object())
        return make_error(errc::invalid_argument, "The field 'policy' must be an object");
    return policy_fields(it->value().as_object());
}

result<std::string> optional_string(const json::object& o, std::string_view name, std::size_t max = 4096)
{
    if (!o.contains(name))
        return std::string();
    auto s = string_field(o, name);
    if (!s)
        return std::move(s).error();
    if (s->size() > max)
        return make_error(errc::invalid_argument, "The field '" + std::string(name) + "' is too long",
                          std::string(name));
    return s;
}

/// An optional member that must be a JSON object, returned serialized ("{}" when absent).
result<std::string> optional_object(const json::object& o, std::string_view name)
{
    auto it = o.find(name);
    if (it == o.end())
        return std::string("{}");
    if (!it->value().is_object())
        return make_error(errc::invalid_argument, "The field '" + std::string(name) + "' must be an object",
                          std::string(name));
    auto text = json::serialize(it->value());
    if (text.size() > 64 * 1024)
        return make_error(errc::invalid_argument, "The field '" + std::string(name) + "' is too large",
                          std::string(name));
    return text;
}

/// A transition's optional {"comment": "..."} body (an empty body is allowed).
asio::awaitable<result<std::string>> comment_of(request_context& ctx)
{
    if (ctx.content_length.value_or(0) == 0)
        co_return std::string();
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    if (auto only = only_fields(*body, {"comment"}); !only)
        co_return std::move(only).error();
    co_return optional_string(*body, "comment");
}

asio::awaitable<result<response>> transition(request_context& ctx, const path_params& params,
                                             std::optional<registry::transition> t)
{
    // Approve and reject need the policy's approver role; the other transitions their route's role.
    auto v = co_await version_for(ctx, params);
    if (!v)
        co_return std::move(v).error();
    const auto& m = v->model.model;
    if (!t || t == registry::transition::reject)
        if (auto allowed = auth::authorize(ctx.principal, ctx.permission,
                                           auth::team_resource{.name = v->model.team.team.name,
                                                               .role = v->model.team.role,
                                                               .policy_role = m.policy.approver_role});
            !allowed)
            co_return std::move(allowed).error();
    auto comment = co_await comment_of(ctx);
    if (!comment)
        co_return std::move(comment).error();
    result<registry::model_version> done = make_error(errc::internal);
    if (t)
        done = co_await ctx.svc->models.transition_version(m, v->version, *t, ctx.who.user_id,
                                                           std::move(*comment));
    else
        done = co_await ctx.svc->models.approve(m, v->version, ctx.who.user_id, std::move(*comment));
    if (!done)
        co_return std::move(done).error();
    co_return json_response(version_json(m, *done));
}

} // namespace

// --- teams -----------------------------------------------------------------------------------------------

asio::awaitable<result<response>> list_teams(request_context& ctx, const path_params&)
{
    auto teams = co_await ctx.svc->models.teams_of(ctx.who.user_id, ctx.principal.installation_admin);
    json::array items;
    for (const auto& t : teams) {
        auto role = co_await ctx.svc->models.role_of(t.id, ctx.who.user_id);
        items.push_back(team_json(t, role));
    }
    co_return list_response(std::move(items));
}

asio::awaitable<result<response>> create_team(request_context& ctx, const path_params&)
{
    if (auto allowed = co_await authorize_installation(ctx, ctx.permission); !allowed)
        co_return std::move(allowed).error();
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    if (auto only = only_fields(*body, {"name", "default_policy"}); !only)
        co_return std::move(only).error();
    auto name = string_field(*body, "name");
    if (!name)
        co_return std::move(name).error();
    if (!valid_name(*name, name_kind::team))
        co_return make_error(
            errc::invalid_argument,
            "A team name is 1 to 63 characters of a-z, 0-9, '.', '_' and '-', starting with a "
            "letter or digit",
            "name");
    registry::approval_policy defaults;
    defaults.protected_aliases = {"production"};
    if (auto it = body->find("default_policy"); it != body->end()) {
        if (!it->value().is_object())
            co_return make_error(errc::invalid_argument, "The field 'default_policy' must be an object");
        auto p = policy_fields(it->value().as_object());
        if (!p)
            co_return std::move(p).error();
        defaults.required_approvals = p->required_approvals.value_or(defaults.required_approvals);
        defaults.approver_role = p->approver_role.value_or(defaults.approver_role);
        if (p->protected_aliases)
            defaults.protected_aliases = *p->protected_aliases;
    }
    auto t = co_await ctx.svc->models.create_team(std::move(*name), std::move(defaults));
    if (!t)
        co_return std::move(t).error();
    co_return json_response(team_json(*t, std::nullopt), http::status::created);
}

asio::awaitable<result<response>> get_team(request_context& ctx, const path_params& params)
{
    auto t = co_await team_for(ctx, params);
    if (!t)
        co_return std::move(t).error();
    co_return json_response(team_json(t->team, t->role));
}

asio::awaitable<result<response>> list_members(request_context& ctx, const path_params& params)
{
    auto t = co_await team_for(ctx, params);
    if (!t)
        co_return std::move(t).error();
    json::array items;
    auto members = co_await ctx.svc->models.members(t->team.id);
    for (const auto& m : members)
        items.push_back(member_json(m));
    co_return list_response(std::move(items));
}

asio::awaitable<result<response>> set_member(request_context& ctx, const path_params& params)
{
    auto t = co_await team_for(ctx, params);
    if (!t)
        co_return std::move(t).error();
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    if (auto only = only_fields(*body, {"role"}); !only)
        co_return std::move(only).error();
    auto role = role_field(*body, "role");
    if (!role)
        co_return std::move(role).error();
    auto m = co_await ctx.svc->models.set_member(t->team.id, path_param(params, "user"), *role);
    if (!m)
        co_return std::move(m).error();
    co_return json_response(member_json(*m));
}

asio::awaitable<result<response>> remove_member(request_context& ctx, const path_params& params)
{
    auto t = co_await team_for(ctx, params);
    if (!t)
        co_return std::move(t).error();
    auto removed = co_await ctx.svc->models.remove_member(t->team.id, path_param(params, "user"));
    if (!removed)
        co_return std::move(removed).error();
    response res;
    res.status = http::status::no_content;
    co_return res;
}

// --- models ----------------------------------------------------------------------------------------------

asio::awaitable<result<response>> list_models(request_context& ctx, const path_params& params)
{
    auto p = page_of(ctx);
    if (!p)
        co_return std::move(p).error();
    auto t = co_await team_for(ctx, params);
    if (!t)
        co_return std::move(t).error();
    auto rows = co_await ctx.svc->models.models(t->team.id, p->cursor, p->limit + 1);
    co_return page_response(std::move(rows), p->limit, model_json,
                            [](const registry::model& m) { return m.name; });
}

asio::awaitable<result<response>> create_model(request_context& ctx, const path_params& params)
{
    auto t = co_await team_for(ctx, params);
    if (!t)
        co_return std::move(t).error();
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    if (auto only = only_fields(*body, {"name", "bucket", "prefix", "description", "policy"}); !only)
        co_return std::move(only).error();
    auto name = string_field(*body, "name");
    if (!name)
        co_return std::move(name).error();
    if (!valid_name(*name, name_kind::model))
        co_return make_error(
            errc::invalid_argument,
            "A model name is 1 to 128 characters of a-z, 0-9, '.', '_' and '-', starting with a "
            "letter or digit",
            "name");
    auto bucket_name = string_field(*body, "bucket");
    if (!bucket_name)
        co_return std::move(bucket_name).error();
    auto prefix = string_field(*body, "prefix");
    if (!prefix)
        co_return std::move(prefix).error();
    if (!prefix->empty() && (prefix->back() != '/' || !s3::validate_object_key(*prefix)))
        co_return make_error(
            errc::invalid_argument,
            "The prefix must be empty (the whole bucket) or a valid key prefix ending in '/'", "prefix");
    auto description = optional_string(*body, "description");
    if (!description)
        co_return std::move(description).error();
    auto policy = optional_policy(*body);
    if (!policy)
        co_return std::move(policy).error();
    // The caller must be able to use the bucket: binding a model to it is reading it.
    auto bucket = co_await caller_bucket(ctx, *bucket_name);
    if (!bucket)
        co_return std::move(bucket).error();
    registry::model_spec spec{.name = std::move(*name),
                              .bucket_id = bucket->id,
                              .prefix = std::move(*prefix),
                              .description = std::move(*description),
                              .policy = std::move(*policy)};
    auto m = co_await ctx.svc->models.create_model(t->team, std::move(spec), ctx.who.user_id);
    if (!m)
        co_return std::move(m).error();
    co_return with_etag(json_response(model_json(*m), http::status::created), *m);
}

asio::awaitable<result<response>> get_model(request_context& ctx, const path_params& params)
{
    auto m = co_await model_for(ctx, params);
    if (!m)
        co_return std::move(m).error();
    co_return with_etag(json_response(model_json(m->model)), m->model);
}

asio::awaitable<result<response>> update_model(request_context& ctx, const path_params& params)
{
    auto m = co_await model_for(ctx, params);
    if (!m)
        co_return std::move(m).error();
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    if (auto only = only_fields(*body, {"description", "policy"}); !only)
        co_return std::move(only).error();
    registry::model_update update;
    if (body->contains("description")) {
        auto d = optional_string(*body, "description");
        if (!d)
            co_return std::move(d).error();
        update.description = std::move(*d);
    }
    auto policy = optional_policy(*body);
    if (!policy)
        co_return std::move(policy).error();
    if (body->contains("policy"))
        if (auto allowed =
                auth::authorize(ctx.principal, auth::permission::approval_policy_write,
                                auth::team_resource{.name = m->team.team.name, .role = m->team.role});
            !allowed)
            co_return std::move(allowed).error();
    update.policy = std::move(*policy);
    std::optional<std::int64_t> expected;
    if (auto if_match = ctx.get("if-match"); if_match && *if_match != "*") {
        std::string_view tag = *if_match;
        if (tag.starts_with("W/"))
            tag.remove_prefix(2);
        if (tag.size() < 4 || tag.front() != '"' || tag.back() != '"' || tag[1] != 'r')
            co_return make_error(errc::precondition_failed, "If-Match does not match the model's ETag");
        try {
            expected = std::stoll(std::string(tag.substr(2, tag.size() - 3)));
        } catch (const std::exception&) {
            co_return make_error(errc::precondition_failed, "If-Match does not match the model's ETag");
        }
    }
    auto updated =
        co_await ctx.svc->models.update_model(m->model, std::move(update), expected, ctx.who.user_id);
    if (!updated)
        co_return std::move(updated).error();
    co_return with_etag(json_response(model_json(*updated)), *updated);
}

asio::awaitable<result<response>> model_history(request_context& ctx, const path_params& params)
{
    auto p = page_of(ctx);
    if (!p)
        co_return std::move(p).error();
    auto after = numeric_cursor(*p);
    if (!after)
        co_return std::move(after).error();
    auto m = co_await model_for(ctx, params);
    if (!m)
        co_return std::move(m).error();
    auto rows = co_await ctx.svc->models.history(m->model.id, std::nullopt, *after, p->limit + 1);
    co_return page_response(std::move(rows), p->limit, event_json,
                            [](const registry::model_event& e) { return std::to_string(e.id); });
}

// --- versions --------------------------------------------------------------------------------------------

asio::awaitable<result<response>> list_versions(request_context& ctx, const path_params& params)
{
    auto p = page_of(ctx);
    if (!p)
        co_return std::move(p).error();
    auto before = numeric_cursor(*p);
    if (!before)
        co_return std::move(before).error();
    auto m = co_await model_for(ctx, params);
    if (!m)
        co_return std::move(m).error();
    auto rows = co_await ctx.svc->models.versions(m->model.id, static_cast<int>(*before), p->limit + 1);
    const auto& owner = m->model;
    co_return page_response(
        std::move(rows), p->limit, [&](const registry::model_version& v) { return version_json(owner, v); },
        [](const registry::model_version& v) { return std::to_string(v.number); });
}

/// A multipart upload to complete into the model's prefix as part of a new version.
struct upload_completion
{
    std::string path;
    registry::multipart_upload upload;
    std::vector<registry::completed_part_ref> parts;
};

/// The optional "uploads" field of createVersion: [{path, upload_id, parts: [{part_number, etag}]}], each an
/// active upload the caller started at the model's prefix + path.
asio::awaitable<result<std::vector<upload_completion>>>
uploads_to_complete(request_context& ctx, const registry::model& m, const json::object& body)
{
    std::vector<upload_completion> out;
    auto field = body.find("uploads");
    if (field == body.end())
        co_return out;
    constexpr std::size_t max_uploads = 1000;
    if (!field->value().is_array() || field->value().as_array().empty() ||
        field->value().as_array().size() > max_uploads)
        co_return make_error(errc::invalid_argument,
                             "The field 'uploads' must be an array of 1 to 1000 multipart uploads",
                             "uploads");
    std::set<std::string> paths;
    for (const auto& item : field->value().as_array()) {
        if (!item.is_object())
            co_return make_error(errc::invalid_argument, "Each upload must be an object", "uploads");
        const auto& o = item.as_object();
        if (auto only = only_fields(o, {"path", "upload_id", "parts"}); !only)
            co_return std::move(only).error();
        upload_completion u;
        auto path = string_field(o, "path");
        if (!path)
            co_return std::move(path).error();
        u.path = std::move(*path);
        const std::string key = m.prefix + u.path;
        if (u.path.empty() || !s3::validate_object_key(key))
            co_return make_error(errc::invalid_argument, "Upload path '" + u.path + "' is not a valid key",
                                 "uploads");
        if (!paths.insert(u.path).second)
            co_return make_error(errc::invalid_argument, "Upload path '" + u.path + "' is listed twice",
                                 "uploads");
        auto id = string_field(o, "upload_id");
        if (!id)
            co_return std::move(id).error();
        auto parts = o.find("parts");
        if (parts == o.end() || !parts->value().is_array() || parts->value().as_array().empty())
            co_return make_error(errc::invalid_argument,
                                 "Upload '" + u.path + "' needs a non-empty 'parts' array", "uploads");
        for (const auto& p : parts->value().as_array()) {
            if (!p.is_object())
                co_return make_error(errc::invalid_argument, "Each part must be an object", "uploads");
            if (auto only = only_fields(p.as_object(), {"part_number", "etag"}); !only)
                co_return std::move(only).error();
            auto number = integer_field(p.as_object(), "part_number", 1, 10000);
            if (!number)
                co_return std::move(number).error();
            auto etag = string_field(p.as_object(), "etag");
            if (!etag)
                co_return std::move(etag).error();
            u.parts.push_back(registry::completed_part_ref{
                .part_number = static_cast<int>(*number), .etag = std::move(*etag), .checksum = {}});
        }
        auto found = co_await ctx.svc->multipart.find(m.bucket_id, key, *id);
        // Only the caller's own uploads: completing publishes into the bucket in their name.
        if (!found || !auth::authorize(ctx.principal, ctx.permission,
                                       auth::upload_resource{.owner_id = found->owner_id}))
            co_return make_error(errc::no_such_upload,
                                 "No active multipart upload '" + *id + "' of yours for '" + u.path + "'",
                                 "uploads");
        u.upload = std::move(*found);
        out.push_back(std::move(u));
    }
    co_return out;
}

asio::awaitable<result<response>> create_version(request_context& ctx, const path_params& params)
{
    auto m = co_await model_for(ctx, params);
    if (!m)
        co_return std::move(m).error();
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    if (auto only = only_fields(*body, {"label", "description", "framework", "format", "parent", "run_url",
                                        "labels", "metrics", "uploads", "snapshot"});
        !only)
        co_return std::move(only).error();
    auto uploads = co_await uploads_to_complete(ctx, m->model, *body);
    if (!uploads)
        co_return std::move(uploads).error();
    registry::version_spec spec;
    if (body->contains("snapshot")) {
        if (!uploads->empty())
            co_return make_error(errc::invalid_argument,
                                 "A version is made from uploads or from a snapshot, not both", "snapshot");
        auto name = string_field(*body, "snapshot");
        if (!name)
            co_return std::move(name).error();
        auto snap = co_await ctx.svc->snapshots.get(m->model.bucket_id, *name);
        if (!snap)
            co_return make_error(errc::not_found, "The model's bucket has no snapshot '" + *name + "'",
                                 "snapshot");
        if (!m->model.prefix.starts_with(snap->prefix))
            co_return make_error(errc::invalid_argument,
                                 "The snapshot covers only '" + snap->prefix + "', not the model's prefix '" +
                                     m->model.prefix + "'",
                                 "snapshot");
        spec.as_of_seq = snap->seq;
    }
    if (body->contains("label")) {
        auto label = string_field(*body, "label");
        if (!label)
            co_return std::move(label).error();
        if (!valid_name(*label, name_kind::label))
            co_return make_error(
                errc::invalid_argument,
                "A label is 1 to 128 characters of letters, digits, '.', '_', '+' and '-', not "
                "only digits (numbers name versions)",
                "label");
        spec.label = std::move(*label);
    }
    for (auto [field, target] :
         {std::pair{"description", &spec.description}, std::pair{"framework", &spec.framework},
          std::pair{"format", &spec.format}, std::pair{"run_url", &spec.run_url}}) {
        auto v = optional_string(*body, field);
        if (!v)
            co_return std::move(v).error();
        *target = std::move(*v);
    }
    if (body->contains("parent")) {
        auto p = integer_field(*body, "parent", 1, INT32_MAX);
        if (!p)
            co_return std::move(p).error();
        spec.parent = static_cast<int>(*p);
    }
    auto labels = optional_object(*body, "labels");
    if (!labels)
        co_return std::move(labels).error();
    spec.labels_json = std::move(*labels);
    auto metrics = optional_object(*body, "metrics");
    if (!metrics)
        co_return std::move(metrics).error();
    spec.metrics_json = std::move(*metrics);
    // The uploads are completed into the prefix in the version's transaction: all of them and the version,
    // or nothing.
    std::vector<std::string> unreferenced;
    auto& multipart = ctx.svc->multipart;
    if (!uploads->empty())
        spec.before_freeze = [&](pg::connection& c) -> asio::awaitable<result<void>> {
            unreferenced.clear();
            const registry::write_preconditions unconditional;
            for (const auto& u : *uploads) {
                auto done = co_await multipart.complete_in(c, u.upload, u.parts, unconditional, unreferenced);
                if (!done)
                    co_return make_error(done.error().code,
                                         "Upload of '" + u.path + "': " + done.error().message, "uploads");
            }
            co_return ok();
        };
    auto v = co_await ctx.svc->models.create_version(m->model, std::move(spec), ctx.who.user_id);
    if (!v)
        co_return std::move(v).error();
    co_await multipart.release(std::move(unreferenced));
    co_return json_response(version_json(m->model, *v), http::status::created);
}

asio::awaitable<result<response>> get_version(request_context& ctx, const path_params& params)
{
    auto v = co_await version_for(ctx, params);
    if (!v)
        co_return std::move(v).error();
    co_return json_response(version_json(v->model.model, v->version));
}

asio::awaitable<result<response>> list_version_files(request_context& ctx, const path_params& params)
{
    auto p = page_of(ctx);
    if (!p)
        co_return std::move(p).error();
    auto v = co_await version_for(ctx, params);
    if (!v)
        co_return std::move(v).error();
    auto rows = co_await ctx.svc->models.files(v->version.id, p->cursor, p->limit + 1);
    co_return page_response(std::move(rows), p->limit, file_json,
                            [](const registry::model_file& f) { return f.path; });
}

asio::awaitable<result<response>> get_version_manifest(request_context& ctx, const path_params& params)
{
    auto v = co_await version_for(ctx, params);
    if (!v)
        co_return std::move(v).error();
    // The payload version events carry (webhooks/manifest.hpp), URLs signed by the team's event-link key.
    const std::int64_t team_id = v->model.model.team_id;
    nlohmann::json data = {{"team", v->model.model.team},
                           {"model", v->model.model.name},
                           {"version", v->version.number},
                           {"state", v->version.state}};
    co_await webhooks::add_manifest(
        *ctx.svc, v->version.id,
        [&ctx, team_id](const std::string& team) { return webhooks::team_link_key(*ctx.svc, team_id, team); },
        data);
    response res;
    res.headers.set(http::field::content_type, "application/json");
    res.body = data.dump();
    co_return res;
}

asio::awaitable<result<response>> diff_versions(request_context& ctx, const path_params& params)
{
    auto against = ctx.param("against");
    if (!against || against->empty())
        co_return make_error(errc::invalid_argument, "Name the version to compare with: ?against=<version>",
                             "against");
    auto v = co_await version_for(ctx, params);
    if (!v)
        co_return std::move(v).error();
    auto other = co_await ctx.svc->models.get_version(v->model.model, *against, true);
    if (!other)
        co_return std::move(other).error();
    // Changes going from `against` to this version.
    auto d = co_await ctx.svc->models.diff(other->id, v->version.id);
    json::array added, removed, changed;
    for (const auto& f : d.added)
        added.push_back(file_json(f));
    for (const auto& f : d.removed)
        removed.push_back(file_json(f));
    for (const auto& [before, after] : d.changed)
        changed.push_back(
            json::object{{"path", after.path}, {"from", file_json(before)}, {"to", file_json(after)}});
    json::object out{{"from", other->number},
                     {"to", v->version.number},
                     {"added", std::move(added)},
                     {"removed", std::move(removed)},
                     {"changed", std::move(changed)}};
    co_return json_response(out);
}

asio::awaitable<result<response>> submit_version(request_context& ctx, const path_params& params)
{
    return transition(ctx, params, registry::transition::submit);
}

asio::awaitable<result<response>> approve_version(request_context& ctx, const path_params& params)
{
    return transition(ctx, params, std::nullopt);
}

asio::awaitable<result<response>> reject_version(request_context& ctx, const path_params& params)
{
    return transition(ctx, params, registry::transition::reject);
}

asio::awaitable<result<response>> deprecate_version(request_context& ctx, const path_params& params)
{
    return transition(ctx, params, registry::transition::deprecate);
}

asio::awaitable<result<response>> archive_version(request_context& ctx, const path_params& params)
{
    return transition(ctx, params, registry::transition::archive);
}

asio::awaitable<result<response>> version_history(request_context& ctx, const path_params& params)
{
    auto v = co_await version_for(ctx, params);
    if (!v)
        co_return std::move(v).error();
    auto events = co_await ctx.svc->models.history(v->model.model.id, v->version.id, 0, 10000);
    json::array items;
    for (const auto& e : events)
        items.push_back(event_json(e));
    co_return list_response(std::move(items));
}

// --- aliases ---------------------------------------------------------------------------------------------

asio::awaitable<result<response>> list_aliases(request_context& ctx, const path_params& params)
{
    auto m = co_await model_for(ctx, params);
    if (!m)
        co_return std::move(m).error();
    json::array items;
    auto aliases = co_await ctx.svc->models.aliases(m->model.id);
    for (const auto& a : aliases)
        items.push_back(alias_json(m->model, a));
    co_return list_response(std::move(items));
}

asio::awaitable<result<response>> get_alias(request_context& ctx, const path_params& params)
{
    auto m = co_await model_for(ctx, params);
    if (!m)
        co_return std::move(m).error();
    const auto name = path_param(params, "alias");
    auto aliases = co_await ctx.svc->models.aliases(m->model.id);
    for (const auto& a : aliases)
        if (a.name == name) {
            auto res = json_response(alias_json(m->model, a));
            res.headers.set(http::field::etag, registry::alias_etag(a));
            co_return res;
        }
    co_return make_error(errc::not_found, "No such alias");
}

asio::awaitable<result<response>> set_alias(request_context& ctx, const path_params& params)
{
    const auto name = path_param(params, "alias");
    if (!valid_name(name, name_kind::alias))
        co_return make_error(
            errc::invalid_argument,
            "An alias is 1 to 63 characters of letters, digits, '.', '_' and '-', starting with a "
            "letter",
            "alias");
    auto m = co_await model_for(ctx, params);
    if (!m)
        co_return std::move(m).error();
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    if (auto only = only_fields(*body, {"version"}); !only)
        co_return std::move(only).error();
    std::string ref;
    auto it = body->find("version");
    if (it != body->end() && it->value().is_int64())
        ref = std::to_string(it->value().as_int64());
    else if (it != body->end() && it->value().is_string())
        ref = std::string(it->value().as_string());
    else
        co_return make_error(errc::invalid_argument, "The field 'version' must be a version number or label",
                             "version");
    // An alias points at a version, never at another alias.
    auto v = co_await ctx.svc->models.get_version(m->model, ref, false);
    if (!v)
        co_return std::move(v).error();
    std::optional<std::string> if_match;
    if (auto h = ctx.get("if-match"))
        if_match = std::string(*h);
    auto a = co_await ctx.svc->models.set_alias(m->model, name, *v, ctx.who.user_id, std::move(if_match));
    if (!a)
        co_return std::move(a).error();
    auto res = json_response(alias_json(m->model, *a));
    res.headers.set(http::field::etag, registry::alias_etag(*a));
    co_return res;
}

asio::awaitable<result<response>> delete_alias(request_context& ctx, const path_params& params)
{
    auto m = co_await model_for(ctx, params);
    if (!m)
        co_return std::move(m).error();
    std::optional<std::string> if_match;
    if (auto h = ctx.get("if-match"))
        if_match = std::string(*h);
    auto removed = co_await ctx.svc->models.delete_alias(m->model, path_param(params, "alias"),
                                                         ctx.who.user_id, std::move(if_match));
    if (!removed)
        co_return std::move(removed).error();
    response res;
    res.status = http::status::no_content;
    co_return res;
}

} // namespace depot::server::api
