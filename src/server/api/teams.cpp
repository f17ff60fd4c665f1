// REST handlers of the model registry's teams and their members. Authorization: the route's permission
// on the team of the path (server/authorization.hpp authorize_team; the rules in auth/authorize.hpp).
#include "server/api/http_api.hpp"
#include "server/api/model_access.hpp"
#include "server/api/model_input.hpp"
#include "server/api/model_json.hpp"
#include "server/api/paging.hpp"
#include "server/authorization.hpp"
#include "server/services.hpp"

namespace depot::server::api {

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
        defaults.four_eyes = p->four_eyes.value_or(defaults.four_eyes);
    }
    auto t = co_await ctx.svc->models.create_team(ctx.audit, std::move(*name), std::move(defaults));
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
    auto m = co_await ctx.svc->models.set_member(ctx.audit, t->team.id, path_param(params, "user"), *role);
    if (!m)
        co_return std::move(m).error();
    co_return json_response(member_json(*m));
}

asio::awaitable<result<response>> remove_member(request_context& ctx, const path_params& params)
{
    auto t = co_await team_for(ctx, params);
    if (!t)
        co_return std::move(t).error();
    auto removed = co_await ctx.svc->models.remove_member(ctx.audit, t->team.id, path_param(params, "user"));
    if (!removed)
        co_return std::move(removed).error();
    response res;
    res.status = http::status::no_content;
    co_return res;
}

} // namespace depot::server::api
