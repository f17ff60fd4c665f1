// The team, model and version of a model-registry path (server/api/model_access.hpp).
#include "server/api/model_access.hpp"

#include "auth/scope_alias.hpp"
#include "server/services.hpp"

namespace depot::server::api {

asio::awaitable<result<team_access>> team_for(request_context& ctx, const path_params& params)
{
    return authorize_team(ctx, ctx.permission, path_param(params, "team"));
}

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

asio::awaitable<result<version_access>> version_for(request_context& ctx, const path_params& params)
{
    auto m = co_await model_for(ctx, params);
    if (!m)
        co_return std::move(m).error();
    // An alias scope (authorized for its alias's name only) addresses the version of the alias it was made
    // for, by identity: never a label or a later alias that took the name.
    // (An if, not `?:` between two co_awaits: GCC 12 frees the chosen result's strings too early there.)
    const auto& scope = ctx.principal.scope;
    result<registry::model_version> v = make_error(errc::not_found, "No such version");
    if (scope && !scope->alias.empty())
        v = co_await ctx.svc->models.version_of_alias(m->model, auth::scope_alias_id(ctx.who.scope));
    else
        v = co_await ctx.svc->models.get_version(m->model, path_param(params, "version"), true);
    if (!v)
        co_return std::move(v).error();
    co_return version_access{std::move(*m), std::move(*v)};
}

} // namespace depot::server::api
