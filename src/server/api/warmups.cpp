// REST handlers for warm-up jobs and the warm-up policy:
// /api/v1/teams/{team}/models/{model}/warmups[/{warmup}] and
// /api/v1/teams/{team}[/models/{model}]/warmup-policy. Authorization: the route's permission on the team
// (reading: reader, starting a warm-up: writer, changing a policy: admin; auth/authorize.hpp).
#include "registry/service/warmups.hpp"

#include "registry/service/model_registry.hpp"
#include "server/api/http_api.hpp"
#include "server/api/paging.hpp"
#include "server/authorization.hpp"
#include "server/services.hpp"

#include <algorithm>

namespace depot::server::api {
namespace {

using registry::team_role;

/// The team of the path and the caller's role in it, if the caller may do the route's permission there.
asio::awaitable<result<std::pair<registry::team, team_role>>> team_of(request_context& ctx,
                                                                      const path_params& params)
{
    auto t = co_await authorize_team(ctx, ctx.permission, path_param(params, "team"));
    if (!t)
        co_return std::move(t).error();
    co_return std::make_pair(std::move(t->team), t->role);
}

asio::awaitable<result<registry::model>> model_of(request_context& ctx, const path_params& params)
{
    auto t = co_await team_of(ctx, params);
    if (!t)
        co_return std::move(t).error();
    co_return co_await ctx.svc->models.get_model(t->first.id, path_param(params, "model"));
}

json::value opt_string(const std::optional<std::string>& s)
{
    return s ? json::value(json::string(*s)) : json::value(nullptr);
}

double percent_of(std::int64_t done, std::int64_t total, bool finished)
{
    if (total <= 0)
        return finished ? 100.0 : 0.0;
    return static_cast<double>(
               static_cast<std::int64_t>(1000.0 * static_cast<double>(done) / static_cast<double>(total))) /
           10.0;
}

json::object job_json(const registry::warmup_job& j)
{
    json::array awaited;
    for (const auto& i : j.instances)
        awaited.push_back(json::string(i));
    json::array progress;
    std::optional<double> lowest;
    for (const auto& p : j.progress) {
        const double pct = percent_of(p.bytes_done, p.bytes_total, p.state != "running");
        lowest = lowest ? std::min(*lowest, pct) : pct;
        progress.push_back(json::object{{"instance", p.instance},
                                        {"state", p.state},
                                        {"files_total", p.files_total},
                                        {"files_done", p.files_done},
                                        {"bytes_total", p.bytes_total},
                                        {"bytes_done", p.bytes_done},
                                        {"errors", p.errors},
                                        {"last_error", opt_string(p.last_error)},
                                        {"percent", pct},
                                        {"started_at", iso8601(p.started_at)},
                                        {"updated_at", iso8601(p.updated_at)}});
    }
    return json::object{{"id", j.id},
                        {"team", j.team},
                        {"model", j.model},
                        {"version", j.version},
                        {"alias", opt_string(j.alias)},
                        {"trigger", j.trigger},
                        {"state", j.state},
                        {"requested_by", j.requested_by},
                        {"created_at", iso8601(j.created_at)},
                        {"finished_at", j.finished_at ? json::value(json::string(iso8601(*j.finished_at)))
                                                      : json::value(nullptr)},
                        {"files_total", j.files_total},
                        {"bytes_total", j.bytes_total},
                        {"awaited_instances", std::move(awaited)},
                        {"percent", lowest.value_or(0.0)},
                        {"progress", std::move(progress)}};
}

result<std::int64_t> warmup_id(const path_params& params)
{
    const auto s = path_param(params, "warmup");
    std::int64_t n = 0;
    bool valid = !s.empty() && s.size() <= 18;
    for (char c : s) {
        valid = valid && c >= '0' && c <= '9';
        n = valid ? n * 10 + (c - '0') : 0;
    }
    if (!valid || n == 0)
        return make_error(errc::not_found, "No such warm-up '" + std::string(s) + "'");
    return n;
}

/// {"warmup_on": [...]} (or null for a model: inherit the team's list).
result<std::optional<std::vector<std::string>>> policy_body(const json::object& body, bool nullable)
{
    if (auto only = only_fields(body, {"warmup_on"}); !only)
        return std::move(only).error();
    auto it = body.find("warmup_on");
    if (it == body.end())
        return make_error(errc::invalid_argument, "The field 'warmup_on' is required", "warmup_on");
    if (nullable && it->value().is_null())
        return std::optional<std::vector<std::string>>{};
    const std::string message = "warmup_on must be an array of \"version.approved\", \"alias.updated\" or "
                                "\"alias.updated:<alias>\"" +
                                std::string(nullable ? " (or null: the team's list)" : "");
    if (!it->value().is_array())
        return make_error(errc::invalid_argument, message, "warmup_on");
    std::vector<std::string> out;
    for (const auto& e : it->value().as_array()) {
        if (!e.is_string() || !registry::is_warmup_trigger(e.as_string()))
            return make_error(errc::invalid_argument, message, "warmup_on");
        if (std::find(out.begin(), out.end(), std::string(e.as_string())) == out.end())
            out.emplace_back(e.as_string());
    }
    if (out.size() > 64)
        return make_error(errc::invalid_argument, "warmup_on holds at most 64 entries", "warmup_on");
    return std::optional<std::vector<std::string>>(std::move(out));
}

json::array string_array(const std::vector<std::string>& v)
{
    json::array a;
    for (const auto& s : v)
        a.push_back(json::string(s));
    return a;
}

} // namespace

asio::awaitable<result<response>> create_warmup(request_context& ctx, const path_params& params)
{
    auto m = co_await model_of(ctx, params);
    if (!m)
        co_return std::move(m).error();
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    if (auto only = only_fields(*body, {"version", "alias"}); !only)
        co_return std::move(only).error();
    const auto version = body->find("version");
    const auto alias = body->find("alias");
    if ((version == body->end()) == (alias == body->end()))
        co_return make_error(errc::invalid_argument, "Give exactly one of 'version' and 'alias'", "version");
    std::string ref;
    std::optional<std::string> alias_name;
    if (version != body->end()) {
        if (version->value().is_int64())
            ref = std::to_string(version->value().as_int64());
        else if (version->value().is_string())
            ref = std::string(version->value().as_string());
        else
            co_return make_error(errc::invalid_argument,
                                 "The field 'version' must be a version number or label", "version");
    } else {
        if (!alias->value().is_string() || alias->value().as_string().empty())
            co_return make_error(errc::invalid_argument, "The field 'alias' must be an alias name", "alias");
        ref = std::string(alias->value().as_string());
        alias_name = ref;
    }
    auto v = co_await ctx.svc->models.get_version(*m, ref, alias_name.has_value());
    if (!v)
        co_return std::move(v).error();
    auto job =
        co_await ctx.svc->warmups->create(ctx.audit, m->team_id, m->id, v->id, alias_name, ctx.who.user_id);
    co_return json_response(job_json(job), http::status::created);
}

asio::awaitable<result<response>> list_warmups(request_context& ctx, const path_params& params)
{
    auto m = co_await model_of(ctx, params);
    if (!m)
        co_return std::move(m).error();
    auto p = page_of(ctx);
    if (!p)
        co_return std::move(p).error();
    std::int64_t before = 0;
    if (!p->cursor.empty()) {
        path_params cursor{{"warmup", p->cursor}};
        auto n = warmup_id(cursor);
        if (!n)
            co_return make_error(errc::invalid_argument, "cursor is not one this API returned", "cursor");
        before = *n;
    }
    auto jobs = co_await ctx.svc->warmups->list(m->id, before, p->limit + 1);
    std::optional<std::string> next;
    if (jobs.size() > p->limit) {
        jobs.resize(p->limit);
        next = std::to_string(jobs.back().id);
    }
    json::array items;
    for (const auto& j : jobs)
        items.push_back(job_json(j));
    co_return list_response(std::move(items), next);
}

asio::awaitable<result<response>> get_warmup(request_context& ctx, const path_params& params)
{
    auto m = co_await model_of(ctx, params);
    if (!m)
        co_return std::move(m).error();
    auto id = warmup_id(params);
    if (!id)
        co_return std::move(id).error();
    auto job = co_await ctx.svc->warmups->get(m->id, *id);
    if (!job)
        co_return make_error(errc::not_found, "No such warm-up '" + std::to_string(*id) + "'");
    co_return json_response(job_json(*job));
}

asio::awaitable<result<response>> get_team_warmup_policy(request_context& ctx, const path_params& params)
{
    auto t = co_await team_of(ctx, params);
    if (!t)
        co_return std::move(t).error();
    auto list = co_await ctx.svc->warmups->team_policy(t->first.id);
    co_return json_response(json::object{{"warmup_on", string_array(list)}});
}

asio::awaitable<result<response>> set_team_warmup_policy(request_context& ctx, const path_params& params)
{
    auto t = co_await team_of(ctx, params);
    if (!t)
        co_return std::move(t).error();
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    auto list = policy_body(*body, false);
    if (!list)
        co_return std::move(list).error();
    co_await ctx.svc->warmups->set_team_policy(ctx.audit, t->first.id, **list);
    co_return json_response(json::object{{"warmup_on", string_array(**list)}});
}

asio::awaitable<result<response>> get_model_warmup_policy(request_context& ctx, const path_params& params)
{
    auto m = co_await model_of(ctx, params);
    if (!m)
        co_return std::move(m).error();
    auto own = co_await ctx.svc->warmups->model_policy(m->id);
    auto team = co_await ctx.svc->warmups->team_policy(m->team_id);
    co_return json_response(
        json::object{{"warmup_on", own ? json::value(string_array(*own)) : json::value(nullptr)},
                     {"effective", string_array(own ? *own : team)}});
}

asio::awaitable<result<response>> set_model_warmup_policy(request_context& ctx, const path_params& params)
{
    auto m = co_await model_of(ctx, params);
    if (!m)
        co_return std::move(m).error();
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    auto list = policy_body(*body, true);
    if (!list)
        co_return std::move(list).error();
    co_await ctx.svc->warmups->set_model_policy(ctx.audit, m->id, *list);
    auto team = co_await ctx.svc->warmups->team_policy(m->team_id);
    co_return json_response(
        json::object{{"warmup_on", *list ? json::value(string_array(**list)) : json::value(nullptr)},
                     {"effective", string_array(*list ? **list : team)}});
}

} // namespace depot::server::api
