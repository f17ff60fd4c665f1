// REST handlers of model versions: create (freezing the prefix, optionally completing multipart uploads
// or from a snapshot), read, files, manifest, diff, the approval workflow and history. Authorization: the
// route's permission on the team of the path; approve and reject also the policy's approver role.
#include "common/hash.hpp"
#include "common/json.hpp"
#include "registry/service/audit.hpp"
#include "s3/names.hpp"
#include "server/api/http_api.hpp"
#include "server/api/model_access.hpp"
#include "server/api/model_input.hpp"
#include "server/api/model_json.hpp"
#include "server/api/paging.hpp"
#include "server/authorization.hpp"
#include "server/services.hpp"
#include "server/webhooks/manifest.hpp"

#include <set>

namespace depot::server::api {
namespace {

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
        done = co_await ctx.svc->models.transition_version(m, v->version, *t, ctx.audit, std::move(*comment));
    else
        done = co_await ctx.svc->models.approve(m, v->version, ctx.audit, std::move(*comment));
    if (!done)
        co_return std::move(done).error();
    co_return json_response(version_json(m, *done));
}

} // namespace

// --- versions --------------------------------------------------------------------------------------------

asio::awaitable<result<response>> list_versions(request_context& ctx, const path_params& params)
{
    auto p = page_of(ctx);
    if (!p)
        co_return std::move(p).error();
    auto before = numeric_cursor(*p);
    if (!before)
        co_return std::move(before).error();
    auto label = label_param(ctx);
    if (!label)
        co_return std::move(label).error();
    auto m = co_await model_for(ctx, params);
    if (!m)
        co_return std::move(m).error();
    std::vector<registry::model_version> rows;
    if (*label)
        rows = co_await registry::model_queries::find_versions(*ctx.svc->db, m->model.id, **label,
                                                               static_cast<int>(*before), p->limit + 1);
    else
        rows = co_await ctx.svc->models.versions(m->model.id, static_cast<int>(*before), p->limit + 1);
    const auto& owner = m->model;
    co_return page_response(
        std::move(rows), p->limit, [&](const registry::model_version& v) { return version_json(owner, v); },
        [](const registry::model_version& v) { return std::to_string(v.number); });
}

/// The optional "uploads" field of createVersion: [{path, upload_id, parts: [{part_number, etag}]}], each an
/// active upload the caller started at the model's prefix + path.
asio::awaitable<result<std::vector<registry::version_upload>>> uploads_to_complete(request_context& ctx,
                                                                                   const registry::model& m,
                                                                                   const registry::bucket& b,
                                                                                   const json::object& body)
{
    std::vector<registry::version_upload> out;
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
        registry::version_upload u;
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
        // Completing writes the object, as CompleteMultipartUpload does, and needs what it needs now: a
        // write of the key in the bucket (its owner, an installation admin, a grant that still counts) that
        // its policy does not deny. Having started the upload is not enough once that right is gone.
        if (auto allowed =
                co_await authorize_bucket_access(ctx, auth::permission::write_object, b, key, "s3:PutObject");
            !allowed)
            co_return make_error(
                errc::access_denied,
                "You may not write '" + key + "' in bucket " + b.name +
                    " (s3:PutObject: completing an upload writes the object): " + allowed.error().message,
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
    auto bucket = co_await ctx.svc->buckets.get(m->model.bucket);
    if (!bucket)
        co_return make_error(errc::conflict, "The model's bucket no longer exists");
    // A version lists the model's prefix and freezes what it finds: the policy's Deny of either binds.
    if (policy_denies(ctx, *bucket, "s3:ListBucket", m->model.prefix))
        co_return make_error(errc::access_denied,
                             "The bucket's policy denies you s3:ListBucket of '" + m->model.prefix + "'");
    auto uploads = co_await uploads_to_complete(ctx, m->model, *bucket, *body);
    if (!uploads)
        co_return std::move(uploads).error();
    registry::version_spec spec;
    spec.may_read = [&ctx, b = *bucket](std::string_view key) {
        return !policy_denies(ctx, b, "s3:GetObject", key);
    };
    if (body->contains("snapshot")) {
        if (!uploads->empty())
            co_return make_error(errc::invalid_argument,
                                 "A version is made from uploads or from a snapshot, not both", "snapshot");
        auto name = string_field(*body, "snapshot");
        if (!name)
            co_return std::move(name).error();
        // Snapshots are their bucket's owner's (README): a version made from one is the owner's to make,
        // with a credential that reaches the bucket's snapshots (a model's scope does not: the version
        // would serve what the model's files are not any more).
        if (auto owner = authorize_bucket(ctx, auth::permission::read_object, *bucket); !owner)
            co_return make_error(errc::not_found, "The model's bucket has no snapshot '" + *name + "'",
                                 "snapshot");
        if (auto inside = co_await authorize_area(ctx, auth::permission::read_object, bucket->name,
                                                  m->model.prefix, true);
            !inside)
            co_return std::move(inside).error();
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
                "only digits (numbers name versions) nor 40 hexadecimal digits (commit ids do)",
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
    spec.uploads = std::move(*uploads);
    auto v = co_await ctx.svc->models.create_version(m->model, std::move(spec), ctx.audit);
    if (!v)
        co_return std::move(v).error();
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
    // Links handed to a caller are download links (getFileDownloadLink): valid an hour at most, so that
    // they do not outlive the caller's membership by much, and audited under the caller when issued.
    const std::int64_t team_id = v->model.model.team_id;
    const auto lifetime = link_lifetime_for(ctx, max_link_lifetime);
    boost::json::object data;
    data["team"] = json_string(v->model.model.team);
    data["model"] = json_string(v->model.model.name);
    data["version"] = v->version.number;
    data["state"] = json_string(v->version.state);
    co_await webhooks::add_manifest(
        *ctx.svc, v->version.id,
        [&ctx, team_id](const std::string& team) { return webhooks::team_link_key(*ctx.svc, team_id, team); },
        data, lifetime);
    if (data.contains("urls_expire_at")) {
        const auto& m = v->model.model;
        const std::string resource = m.team + "/" + m.name + "/" + std::to_string(v->version.number);
        const std::string details = "{\"model\":" + registry::audit_quote(m.team + "/" + m.name) +
                                    ",\"version\":" + std::to_string(v->version.number) +
                                    ",\"manifest\":true,\"expires_in\":" + std::to_string(lifetime.count()) +
                                    "}";
        co_await registry::audit_log::record_download_link(*ctx.svc->db, ctx.audit, resource, m.team,
                                                           details);
    }
    response res;
    res.headers.set(http::field::content_type, "application/json");
    res.body = boost::json::serialize(data);
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
    // An alias scope reads one version: it compares it with nothing else.
    if (const auto& scope = ctx.principal.scope; scope && !scope->alias.empty() && other->id != v->version.id)
        co_return make_error(errc::access_denied,
                             "the credential is limited to the version alias " + scope->alias + " points to");
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

} // namespace depot::server::api
