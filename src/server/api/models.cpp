// REST handlers of the model registry's models (create, read, update with If-Match, history).
// Authorization: the route's permission on the team of the path (server/authorization.hpp authorize_team;
// the rules in auth/authorize.hpp).
#include "s3/names.hpp"
#include "server/api/http_api.hpp"
#include "server/api/model_access.hpp"
#include "server/api/model_input.hpp"
#include "server/api/model_json.hpp"
#include "server/api/paging.hpp"
#include "server/authorization.hpp"
#include "server/services.hpp"

namespace depot::server::api {

// --- models ----------------------------------------------------------------------------------------------

asio::awaitable<result<response>> list_models(request_context& ctx, const path_params& params)
{
    auto p = page_of(ctx);
    if (!p)
        co_return std::move(p).error();
    auto name = name_param(ctx);
    if (!name)
        co_return std::move(name).error();
    auto label = label_param(ctx);
    if (!label)
        co_return std::move(label).error();
    auto t = co_await team_for(ctx, params);
    if (!t)
        co_return std::move(t).error();
    // Filtered in SQL (registry/service/models.hpp), so a page is a page of matches and the cursor stays
    // exact.
    std::vector<registry::model> rows;
    if (name->empty() && !*label) {
        rows = co_await ctx.svc->models.models(t->team.id, p->cursor, p->limit + 1);
    } else {
        // A named filter: GCC 12 mishandles a braced temporary bound to a coroutine's parameter.
        const registry::model_filter filter{*name, *label};
        rows = co_await registry::model_queries::find_models(*ctx.svc->db, t->team.id, filter, p->cursor,
                                                             p->limit + 1);
    }
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
    // A model's own approval policy is the team admin's to set, at creation as by PATCH: a writer's model
    // with approver_role reader or no protected aliases would approve its own releases.
    if (body->contains("policy"))
        if (auto allowed = auth::authorize(ctx.principal, auth::permission::approval_policy_write,
                                           auth::team_resource{.name = t->team.name, .role = t->role});
            !allowed)
            co_return std::move(allowed).error();
    // The caller must be able to use the bucket: binding a model to it is reading it.
    auto bucket = co_await caller_bucket(ctx, *bucket_name, "s3:ListBucket");
    if (!bucket)
        co_return std::move(bucket).error();
    // ... under the model's prefix: a Deny of listing it (s3:prefix) forbids the binding.
    if (policy_denies(ctx, *bucket, "s3:ListBucket", *prefix))
        co_return make_error(errc::access_denied,
                             "The bucket's policy denies you s3:ListBucket of '" + *prefix + "'", "bucket");
    registry::model_spec spec{.name = std::move(*name),
                              .bucket_id = bucket->id,
                              .prefix = std::move(*prefix),
                              .description = std::move(*description),
                              .policy = std::move(*policy)};
    auto m = co_await ctx.svc->models.create_model(t->team, std::move(spec), ctx.audit);
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
    auto updated = co_await ctx.svc->models.update_model(m->model, std::move(update), expected, ctx.audit);
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

} // namespace depot::server::api
