// What tests/layering/check_routes.py must find (the ctest route_checker_finds_unauthorized_routes expects
// 6 violations in this file): a deliberately unauthorized route table. Not compiled.
struct route
{
    http::verb method;
    std::string_view pattern;
    std::string_view name;
    guarded<handler> fn;
    auth::route_permission permission;
    route_resource resource;
};

constexpr std::array<route, 3> routes = {{
    {http::verb::get, "/fine", "fine", fine, permission::whoami, resource_kind::caller},
    // 1: no resource it acts on.
    {http::verb::get, "/no-resource", "noResource", no_resource, permission::account_read},
    // 2: no permission.
    {http::verb::post, "/no-permission", "noPermission", no_permission, resource_kind::account},
}};

asio::awaitable<response> dispatch(request_context& ctx, const route* found, const path_params& params)
{
    // 3: the handler called directly, without the authorization step.
    auto a = co_await found->fn(ctx, params);
    // 4: a table's handler called by name, around the table.
    auto b = co_await fine(ctx, params);
    // 5: a proof forged here rather than by authorization_step; (6) run_handler without authorization_step.
    auto c =
        co_await run_handler(*found, route_authorized(found->permission.value, found->resource.value), ctx);
    // 7: a handler deciding its route's bucket itself.
    auto d = co_await caller_bucket(ctx, path_param(params, "bucket"));
    co_return *a;
}
