// The read-only S3 view of the model registry: s3://<models bucket>/<team>/<model>/<ref>/<path>, where ref is
// a version number, a version label or an alias. Unchanged S3 clients and mount tools list and read released
// models through it. A caller sees the teams they belong to (every team for an installation admin); other
// teams' keys do not exist for them. An alias is resolved once per request, so a download in flight keeps
// reading the version it started with (its blobs are referenced by the version, not by the alias).
#include "auth/scope_alias.hpp"
#include "registry/service/model_registry.hpp"
#include "registry/service/models.hpp"
#include "s3/listing.hpp"
#include "s3/names.hpp"
#include "server/audit_requests.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

#include <algorithm>
#include <array>
#include <tuple>
#include <utility>

namespace depot::server::s3op {
namespace {

/// Keys under `segment` can be on the page: the segment is compatible with the prefix and its keys are not
/// all before the scan's bound.
bool relevant(std::string_view segment, std::string_view prefix, std::string_view bound)
{
    if (!segment.starts_with(prefix) && !prefix.starts_with(segment))
        return false;
    if (bound.empty())
        return true;
    const std::string successor = s3::prefix_successor(segment);
    return successor.empty() || successor > bound;
}

struct resolved_path
{
    registry::model_version version;
    std::string path;
};

/// team/model/ref/path -> the version and the path in it; no_such_key for anything the caller cannot see.
asio::awaitable<result<resolved_path>> resolve(request_context& ctx, std::string_view key)
{
    auto missing = [] { return make_error(errc::no_such_key, "The specified key does not exist."); };
    std::array<std::string_view, 3> parts;
    for (auto& part : parts) {
        auto slash = key.find('/');
        if (slash == std::string_view::npos)
            co_return missing();
        part = key.substr(0, slash);
        key.remove_prefix(slash + 1);
    }
    if (key.empty())
        co_return missing();
    auto team = co_await ctx.svc->models.get_team(parts[0]);
    if (!team)
        co_return missing();
    const auth::team_resource member{.name = team->name,
                                     .role = co_await ctx.svc->models.role_of(team->id, ctx.who.user_id)};
    if (!auth::authorize(ctx.principal, auth::permission::read_object, member)) {
        note_refusal(ctx, {.team = team->name}); // answered as a missing key: still a refusal, audited
        co_return missing();
    }
    auto model = co_await ctx.svc->models.get_model(team->id, parts[1]);
    if (!model)
        co_return missing();
    result<registry::model_version> version = make_error(errc::not_found);
    if (const auto& scope = ctx.principal.scope; scope && !scope->alias.empty()) {
        // An alias scope reads the version of the alias it was made for, by the alias's identity: once that
        // alias is deleted, a label or a new alias taking its name is not it.
        if (team->name != scope->team || model->name != scope->model || parts[2] != scope->alias) {
            note_refusal(ctx, {.team = team->name});
            co_return missing();
        }
        version = co_await ctx.svc->models.version_of_alias(*model, auth::scope_alias_id(ctx.who.scope));
    } else {
        version = co_await ctx.svc->models.get_version(*model, parts[2], true);
    }
    if (!version)
        co_return missing();
    co_return resolved_path{std::move(*version), std::string(key)};
}

/// One listing page of the view, walked in key order from the listing's bound. Every level (teams, models,
/// refs, files) is read from the database in pages of the listing's own size, starting at the first segment
/// that can hold keys at or after the bound and under the prefix; a common prefix moves the bound past
/// itself and the walk goes on from there. So a page loads about as many rows per level as it shows keys,
/// whatever the number of models and versions.
class view_walk
{
public:
    view_walk(request_context& ctx, const registry::list_request& req, s3::listing_page& fold,
              registry::list_page& page, std::string bound, bool inclusive)
        : ctx_(ctx), db_(*ctx.svc->db), req_(req), fold_(fold), page_(page), bound_(std::move(bound)),
          inclusive_(inclusive), chunk_(std::min<std::size_t>(req.max_keys, 1000) + 1)
    {}

    asio::awaitable<void> run()
    {
        auto cursor = start_of("");
        for (;;) {
            auto teams = co_await registry::model_queries::view_teams(
                db_, ctx_.who.user_id, ctx_.principal.installation_admin, cursor, chunk_);
            for (const auto& team : teams) {
                const std::string tp = team.name + "/";
                if (beyond_prefix(tp))
                    co_return;
                if (!relevant(tp, req_.prefix, bound_))
                    continue;
                co_await models(team, tp);
                if (done_)
                    co_return;
            }
            if (teams.size() < chunk_)
                co_return;
            cursor = next_page("", teams.back().name);
        }
    }

private:
    asio::awaitable<void> models(const registry::view_node& team, const std::string& tp)
    {
        auto cursor = start_of(tp);
        for (;;) {
            auto models = co_await registry::model_queries::view_models(db_, team.id, cursor, chunk_);
            for (const auto& model : models) {
                const std::string mp = tp + model.name + "/";
                if (beyond_prefix(mp))
                    co_return;
                if (!relevant(mp, req_.prefix, bound_))
                    continue;
                co_await refs(model, mp);
                if (past(tp))
                    co_return;
            }
            if (models.size() < chunk_)
                co_return;
            cursor = next_page(tp, models.back().name);
        }
    }

    asio::awaitable<void> refs(const registry::view_node& model, const std::string& mp)
    {
        // An alias scope lists only its alias, and only while that alias (by identity) points somewhere.
        const auto& scope = ctx_.principal.scope;
        std::optional<std::int64_t> aliased;
        if (scope && !scope->alias.empty()) {
            if (!co_await alias_version(model, aliased))
                co_return;
        }
        auto cursor = start_of(mp);
        for (;;) {
            auto refs = co_await registry::model_queries::view_refs(db_, model.id, cursor, chunk_);
            for (const auto& ref : refs) {
                if (aliased && (ref.name != scope->alias || ref.version_id != *aliased))
                    continue;
                const std::string rp = mp + ref.name + "/";
                if (beyond_prefix(rp))
                    co_return;
                if (!relevant(rp, req_.prefix, bound_))
                    continue;
                co_await files(ref, rp);
                if (past(mp))
                    co_return;
            }
            if (refs.size() < chunk_)
                co_return;
            cursor = next_page(mp, refs.back().name);
        }
    }

    /// For an alias scope: the id of the version its alias points to, when `model` is the scope's model and
    /// the alias still exists; false otherwise (nothing of the model is listed).
    asio::awaitable<bool> alias_version(const registry::view_node& model, std::optional<std::int64_t>& out)
    {
        const auto& scope = *ctx_.principal.scope;
        auto where = co_await ctx_.svc->credentials.locate_model(scope.team, scope.model);
        if (!where || where->model_id != model.id)
            co_return false;
        registry::model m;
        m.id = model.id;
        auto v = co_await ctx_.svc->models.version_of_alias(m, auth::scope_alias_id(ctx_.who.scope));
        if (!v)
            co_return false;
        out = v->id;
        co_return true;
    }

    asio::awaitable<void> files(const registry::view_ref& ref, const std::string& rp)
    {
        auto [cursor, cursor_inclusive] = file_start(rp);
        for (;;) {
            auto batch = co_await ctx_.svc->models.files(ref.version_id, cursor, chunk_, cursor_inclusive);
            bool seek = false;
            for (const auto& f : batch) {
                const std::string key = rp + f.path;
                if (!std::string_view(key).starts_with(req_.prefix)) {
                    if (key > req_.prefix)
                        co_return;
                    continue;
                }
                auto step = fold_.offer(key);
                if (step.what == s3::listing_page::action::stop) {
                    done_ = true;
                    co_return;
                }
                if (step.what == s3::listing_page::action::common_prefix) {
                    if (step.seek.empty()) {
                        done_ = true;
                        co_return;
                    }
                    bound_ = std::move(step.seek);
                    inclusive_ = true;
                    if (past(rp))
                        co_return;
                    seek = true;
                    break;
                }
                if (step.what == s3::listing_page::action::content) {
                    registry::listing_entry entry;
                    entry.key = key;
                    entry.size = f.size;
                    entry.etag = f.etag;
                    entry.last_modified = ref.created_at;
                    entry.owner_id = ref.created_by;
                    entry.owner_display_name = ref.created_by;
                    page_.contents.push_back(std::move(entry));
                }
                bound_ = key;
                inclusive_ = false;
            }
            if (seek) {
                std::tie(cursor, cursor_inclusive) = file_start(rp);
                continue;
            }
            if (batch.size() < chunk_)
                co_return;
            cursor = batch.back().path;
            cursor_inclusive = false;
        }
    }

    /// The first segment under `parent` that can hold keys at or after the bound and under the prefix: the
    /// bound's and the prefix's own segment at that level, when they lie under `parent`.
    registry::view_cursor start_of(std::string_view parent) const
    {
        auto segment_of = [&](std::string_view s) {
            if (s.size() <= parent.size() || !s.starts_with(parent))
                return std::string();
            auto rest = s.substr(parent.size());
            auto slash = rest.find('/');
            return std::string(slash == std::string_view::npos ? rest : rest.substr(0, slash + 1));
        };
        return registry::view_cursor{.bound = std::max(segment_of(bound_), segment_of(req_.prefix)),
                                     .inclusive = true};
    }

    /// Where the next page of a level starts: after the last row, or further when the bound has moved on.
    registry::view_cursor next_page(std::string_view parent, std::string_view last) const
    {
        auto start = start_of(parent);
        std::string after = std::string(last) + "/";
        if (start.bound > after)
            return start;
        return registry::view_cursor{.bound = std::move(after), .inclusive = false};
    }

    /// Where the files of ref path `rp` start: after the bound's path in it, from the prefix's.
    std::pair<std::string, bool> file_start(const std::string& rp) const
    {
        std::string after;
        bool inclusive = true;
        if (bound_.size() >= rp.size() && std::string_view(bound_).starts_with(rp)) {
            after = bound_.substr(rp.size());
            inclusive = inclusive_;
        }
        if (req_.prefix.size() > rp.size() && after < req_.prefix.substr(rp.size())) {
            after = req_.prefix.substr(rp.size());
            inclusive = true;
        }
        return {std::move(after), inclusive};
    }

    /// Nothing under `parent` is left for this page: it is done, or the bound has moved past the subtree.
    bool past(std::string_view parent) const
    {
        return done_ || (!std::string_view(bound_).starts_with(parent) && std::string_view(bound_) > parent);
    }

    /// Segment path `segment` and every later one hold no key under the prefix.
    bool beyond_prefix(std::string_view segment) const
    {
        return !segment.starts_with(req_.prefix) && !std::string_view(req_.prefix).starts_with(segment) &&
               segment > std::string_view(req_.prefix);
    }

    request_context& ctx_;
    pg::pool& db_;
    const registry::list_request& req_;
    s3::listing_page& fold_;
    registry::list_page& page_;
    std::string bound_;
    bool inclusive_;
    std::size_t chunk_;
    bool done_ = false;
};

} // namespace

bool is_model_view(const request_context& ctx)
{
    return !ctx.bucket.empty() && ctx.bucket == ctx.svc->opts.models_bucket;
}

asio::awaitable<result<response>> read_model_file(request_context& ctx, std::string_view view_key, bool head)
{
    if (ctx.param("versionId"))
        co_return make_error(errc::invalid_argument, "The model view has no object versions", "versionId");
    auto where = co_await resolve(ctx, view_key);
    if (!where)
        co_return std::move(where).error();
    auto opened = co_await ctx.svc->models.open_file(where->version, where->path);
    if (!opened)
        co_return std::move(opened).error();
    auto handle = std::make_shared<registry::object_handle>(std::move(*opened));
    auto res = co_await respond_with_object(ctx, std::move(handle), nullptr, head);
    if (res)
        res->headers.set("x-depot-model-version", std::to_string(where->version.number));
    co_return res;
}

asio::awaitable<result<registry::list_page>> list_model_view(request_context& ctx, registry::list_request req)
{
    registry::list_page page;
    auto start = s3::listing_start(req.prefix, req.delimiter, req.after);
    if (req.max_keys == 0 || start.exhausted)
        co_return page;
    s3::listing_page fold(req.prefix, req.delimiter, req.max_keys);
    view_walk walk(ctx, req, fold, page, std::move(start.key), start.inclusive);
    co_await walk.run();
    page.common_prefixes = fold.common_prefixes();
    page.truncated = fold.truncated();
    page.last = fold.last();
    co_return page;
}

} // namespace depot::server::s3op
