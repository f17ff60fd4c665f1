// Opening a repo at a revision for the Hub API: scopes, team membership, revisions, commit ids.
#include "server/hf/repo.hpp"

#include "auth/scope_alias.hpp"
#include "common/hash.hpp"
#include "registry/service/models.hpp"
#include "registry/vocabulary.hpp"
#include "server/audit_requests.hpp"
#include "server/services.hpp"

#include <algorithm>

namespace depot::server::hf {
namespace {

error repo_not_found()
{
    return make_error(errc::no_such_bucket, "Repository not found");
}

bool is_commit_id(std::string_view s)
{
    return s.size() == 40 && std::all_of(s.begin(), s.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

/// The version a revision names; no_such_version otherwise.
asio::awaitable<result<registry::model_version>>
resolve_revision(request_context& ctx, const registry::model& m, std::string_view revision)
{
    auto& models = ctx.svc->models;
    auto missing = [&] {
        return make_error(errc::no_such_version, "Invalid rev id: " + std::string(revision));
    };
    if (is_commit_id(revision)) {
        auto number = co_await registry::model_queries::version_of_commit(*ctx.svc->db, m.id, revision);
        if (!number)
            co_return missing();
        auto v = co_await models.get_version(m, std::to_string(*number), false);
        if (!v)
            co_return missing();
        co_return std::move(*v);
    }
    if (revision == "main" || revision == "HEAD") {
        // Hub clients ask for "main" (Python) or "HEAD" (JavaScript) when given no revision.
        if (auto v = co_await models.get_version(m, "main", true))
            co_return std::move(*v);
        if (auto v = co_await models.get_version(m, "latest", true))
            co_return std::move(*v);
        co_return missing();
    }
    auto v = co_await models.get_version(m, revision, true);
    if (!v)
        co_return missing();
    co_return std::move(*v);
}

} // namespace

asio::awaitable<result<repo_at>> open_repo(request_context& ctx, hub_request& req)
{
    // The scope first: a refusal must not tell whether the model exists.
    const auth::hf_model asked{.team = req.team, .model = req.model};
    if (auto allowed = auth::authorize(ctx.principal, ctx.permission, asked); !allowed)
        co_return std::move(allowed).error();
    const auto& scope = ctx.principal.scope;

    auto& models = ctx.svc->models;
    auto team = co_await models.get_team(req.team);
    if (!team)
        co_return repo_not_found();
    const auth::team_resource member{.name = team->name,
                                     .role = co_await models.role_of(team->id, ctx.who.user_id)};
    if (!auth::authorize(ctx.principal, ctx.permission, member)) {
        note_refusal(ctx, {.team = team->name}); // answered RepoNotFound, audited as a refusal
        co_return repo_not_found();
    }
    auto model = co_await models.get_model(team->id, req.model);
    if (!model)
        co_return repo_not_found();

    const bool alias_scope = scope && !scope->alias.empty();
    std::string revision = req.revision.empty() ? "main" : req.revision;
    result<registry::model_version> version = make_error(errc::not_found);
    if (alias_scope) {
        // Exactly the files of the version the alias points to now, whichever revision names it. The alias
        // is the one the credential was made for (its identity): once deleted, a label or a new alias taking
        // its name is not it, and the credential reads nothing.
        auto aliased = co_await models.version_of_alias(*model, auth::scope_alias_id(ctx.who.scope));
        if (revision == "main" || revision == "HEAD" || revision == scope->alias)
            version = aliased;
        else
            version = co_await resolve_revision(ctx, *model, revision);
        auto at = asked;
        at.alias_version = aliased && version && aliased->id == version->id;
        if (auto allowed = auth::authorize(ctx.principal, ctx.permission, at); !allowed)
            co_return std::move(allowed).error();
    } else {
        version = co_await resolve_revision(ctx, *model, revision);
    }
    if (!version)
        co_return std::move(version).error();
    auto commit = co_await registry::model_queries::version_commit(*ctx.svc->db, model->id, version->id);
    req.commit = commit;
    co_return repo_at{std::move(*model), std::move(*version), std::move(commit)};
}

asio::awaitable<result<std::vector<registry::model_file>>>
all_files(request_context& ctx, const registry::model_version& v, std::size_t limit)
{
    std::vector<registry::model_file> out;
    std::string after;
    bool first = true;
    for (;;) {
        auto batch = co_await ctx.svc->models.files(v.id, after, 1000, first);
        first = false;
        if (batch.empty())
            break;
        after = batch.back().path;
        const bool last = batch.size() < 1000;
        for (auto& f : batch)
            out.push_back(std::move(f));
        if (out.size() > limit)
            co_return make_error(errc::invalid_argument,
                                 "The version has more than " + std::to_string(limit) + " files");
        if (last)
            break;
    }
    co_return out;
}

std::string file_etag(const registry::model_file& f)
{
    return f.sha256.size() == 32 ? to_hex(f.sha256) : f.etag;
}

std::string object_id(std::string_view seed)
{
    return to_hex(sha1(seed));
}

} // namespace depot::server::hf
