// REST handlers of model aliases (list, get, set and delete with If-Match). Authorization: the route's
// permission on the team of the path (server/authorization.hpp authorize_team).
#include "auth/scope_alias.hpp"
#include "server/api/http_api.hpp"
#include "server/api/model_access.hpp"
#include "server/api/model_input.hpp"
#include "server/api/model_json.hpp"
#include "server/api/paging.hpp"
#include "server/authorization.hpp"
#include "server/services.hpp"

namespace depot::server::api {

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
    const auto& scope = ctx.principal.scope;
    for (const auto& a : aliases)
        if (a.name == name) {
            // An alias scope sees its own alias only, by identity (not a later alias of the same name).
            if (scope && !scope->alias.empty() && a.id != auth::scope_alias_id(ctx.who.scope))
                break;
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
            "letter, and not 40 hexadecimal digits (commit ids name versions)",
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
    auto a = co_await ctx.svc->models.set_alias(m->model, name, *v, ctx.audit, std::move(if_match));
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
    auto removed = co_await ctx.svc->models.delete_alias(m->model, path_param(params, "alias"), ctx.audit,
                                                         std::move(if_match));
    if (!removed)
        co_return std::move(removed).error();
    response res;
    res.status = http::status::no_content;
    co_return res;
}

} // namespace depot::server::api
