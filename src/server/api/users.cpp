// REST handlers for users: listing and creating them is installation admin work (what `depotctl user` does
// with database access, here for an admin who only reaches depotd). user.create writes its audit row in the
// repository, as from depotctl.
#include "server/api/http_api.hpp"
#include "server/api/paging.hpp"
#include "server/authorization.hpp"
#include "server/services.hpp"

namespace depot::server::api {
namespace {

json::object user_json(const registry::user& u)
{
    return json::object{{"id", u.id},
                        {"display_name", u.display_name},
                        {"email", u.email},
                        {"admin", u.is_admin},
                        {"created_at", iso8601(u.created_at)}};
}

} // namespace

asio::awaitable<result<response>> list_users(request_context& ctx, const path_params&)
{
    if (auto allowed = co_await authorize_installation(ctx, ctx.permission); !allowed)
        co_return std::move(allowed).error();
    const auto users = co_await ctx.svc->credentials.list_users();
    json::array items;
    for (const auto& u : users)
        items.push_back(user_json(u));
    co_return list_response(std::move(items));
}

asio::awaitable<result<response>> create_user(request_context& ctx, const path_params&)
{
    if (auto allowed = co_await authorize_installation(ctx, ctx.permission); !allowed)
        co_return std::move(allowed).error();
    auto body = co_await read_json_object(ctx);
    if (!body)
        co_return std::move(body).error();
    if (auto only = only_fields(*body, {"id", "display_name", "email", "admin"}); !only)
        co_return std::move(only).error();
    registry::user wanted;
    auto id = string_field(*body, "id");
    if (!id)
        co_return std::move(id).error();
    wanted.id = std::move(*id);
    for (auto [name, field] :
         {std::pair{"display_name", &wanted.display_name}, std::pair{"email", &wanted.email}})
        if (body->contains(name)) {
            auto v = string_field(*body, name);
            if (!v)
                co_return std::move(v).error();
            *field = std::move(*v);
        }
    if (auto it = body->find("admin"); it != body->end()) {
        if (!it->value().is_bool())
            co_return make_error(errc::invalid_argument, "The field 'admin' must be true or false", "admin");
        wanted.is_admin = it->value().as_bool();
    }
    auto made = co_await ctx.svc->credentials.create_user(ctx.audit, std::move(wanted));
    if (!made)
        co_return std::move(made).error();
    co_return json_response(user_json(*made), http::status::created);
}

} // namespace depot::server::api
