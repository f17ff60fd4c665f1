// The read-only S3 view of the model registry: s3://<models bucket>/<team>/<model>/<ref>/<path>, where ref is
// a version number, a version label or an alias. Unchanged S3 clients and mount tools list and read released
// models through it. A caller sees the teams they belong to (every team for an installation admin); other
// teams' keys do not exist for them. An alias is resolved once per request, so a download in flight keeps
// reading the version it started with (its blobs are referenced by the version, not by the alias).
#include "registry/model_registry.hpp"
#include "s3/listing.hpp"
#include "s3/names.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

#include <algorithm>
#include <array>
#include <map>

namespace depot::server::s3op {
namespace {

constexpr std::array<std::string_view, 7> allowed_operations = {
    "HeadBucket",  "GetBucketLocation", "GetBucketVersioning", "ListObjectsV2",
    "ListObjects", "GetObject",         "HeadObject"};

constexpr std::size_t max_refs = 100000;

struct ref_entry
{
    std::string name;
    registry::model_version version;
};

/// Sorts by the key segment the name produces ("name/"), which is the byte order of the keys under it.
template <class T, class Name>
void sort_by_segment(std::vector<T>& v, Name name)
{
    std::sort(v.begin(), v.end(), [&](const T& a, const T& b) { return name(a) + "/" < name(b) + "/"; });
}

/// The tree of visible keys, loaded level by level as a listing walks it.
class view_tree
{
public:
    explicit view_tree(request_context& ctx) : ctx_(ctx) {}

    asio::awaitable<const std::vector<registry::team>*> teams()
    {
        if (!teams_) {
            teams_ = co_await ctx_.svc->models.teams_of(ctx_.who.user_id, ctx_.who.is_admin);
            sort_by_segment(*teams_, [](const registry::team& t) { return t.name; });
        }
        co_return &*teams_;
    }

    asio::awaitable<const std::vector<registry::model>*> models(std::int64_t team_id)
    {
        auto it = models_.find(team_id);
        if (it == models_.end()) {
            std::vector<registry::model> all;
            std::string after;
            for (;;) {
                auto page = co_await ctx_.svc->models.models(team_id, after, 1000);
                if (page.empty())
                    break;
                after = page.back().name;
                for (auto& m : page)
                    all.push_back(std::move(m));
            }
            sort_by_segment(all, [](const registry::model& m) { return m.name; });
            it = models_.emplace(team_id, std::move(all)).first;
        }
        co_return &it->second;
    }

    /// Version numbers, labels, and aliases of versions that are not archived.
    asio::awaitable<const std::vector<ref_entry>*> refs(std::int64_t model_id)
    {
        auto it = refs_.find(model_id);
        if (it == refs_.end()) {
            auto versions = co_await ctx_.svc->models.versions(model_id, 0, max_refs);
            std::vector<ref_entry> out;
            for (const auto& v : versions) {
                out.push_back(ref_entry{std::to_string(v.number), v});
                if (v.label)
                    out.push_back(ref_entry{*v.label, v});
                if (v.state != "archived")
                    for (const auto& a : v.aliases)
                        out.push_back(ref_entry{a, v});
            }
            sort_by_segment(out, [](const ref_entry& r) { return r.name; });
            it = refs_.emplace(model_id, std::move(out)).first;
        }
        co_return &it->second;
    }

private:
    request_context& ctx_;
    std::optional<std::vector<registry::team>> teams_;
    std::map<std::int64_t, std::vector<registry::model>> models_;
    std::map<std::int64_t, std::vector<ref_entry>> refs_;
};

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
    if (!ctx.who.is_admin) {
        auto role = co_await ctx.svc->models.role_of(team->id, ctx.who.user_id);
        if (!role)
            co_return missing();
    }
    auto model = co_await ctx.svc->models.get_model(team->id, parts[1]);
    if (!model)
        co_return missing();
    auto version = co_await ctx.svc->models.get_version(*model, parts[2], true);
    if (!version)
        co_return missing();
    co_return resolved_path{std::move(*version), std::string(key)};
}

} // namespace

bool is_model_view(const request_context& ctx)
{
    return !ctx.bucket.empty() && ctx.bucket == ctx.svc->opts.models_bucket;
}

bool model_view_allows(std::string_view operation)
{
    return std::find(allowed_operations.begin(), allowed_operations.end(), operation) !=
           allowed_operations.end();
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
    std::string bound = std::move(start.key);
    bool inclusive = start.inclusive;
    view_tree tree(ctx);

    // Walks the tree in key order from `bound`; a common prefix moves the bound past itself and the walk
    // starts again from the top (the upper levels are cached, so a restart costs no queries).
    bool done = false;
    while (!done) {
        bool restart = false;
        const auto* teams = co_await tree.teams();
        for (const auto& team : *teams) {
            const std::string tp = team.name + "/";
            if (!relevant(tp, req.prefix, bound))
                continue;
            const auto* models = co_await tree.models(team.id);
            for (const auto& model : *models) {
                const std::string mp = tp + model.name + "/";
                if (!relevant(mp, req.prefix, bound))
                    continue;
                const auto* refs = co_await tree.refs(model.id);
                for (const auto& ref : *refs) {
                    const std::string rp = mp + ref.name + "/";
                    if (!relevant(rp, req.prefix, bound))
                        continue;
                    std::string after_path;
                    bool after_inclusive = true;
                    if (bound.size() >= rp.size() && std::string_view(bound).starts_with(rp)) {
                        after_path = bound.substr(rp.size());
                        after_inclusive = inclusive;
                    }
                    if (req.prefix.size() > rp.size() && after_path < req.prefix.substr(rp.size())) {
                        after_path = req.prefix.substr(rp.size());
                        after_inclusive = true;
                    }
                    std::string cursor = after_path;
                    bool cursor_inclusive = after_inclusive;
                    bool ref_done = false;
                    for (;;) {
                        auto batch =
                            co_await ctx.svc->models.files(ref.version.id, cursor, 1000, cursor_inclusive);
                        const bool last_batch = batch.size() < 1000;
                        if (batch.empty())
                            break;
                        cursor = batch.back().path;
                        cursor_inclusive = false;
                        for (const auto& f : batch) {
                            const std::string key = rp + f.path;
                            if (!std::string_view(key).starts_with(req.prefix)) {
                                if (key > req.prefix) {
                                    ref_done = true;
                                    break;
                                }
                                continue;
                            }
                            auto step = fold.offer(key);
                            if (step.what == s3::listing_page::action::stop) {
                                done = true;
                                break;
                            }
                            if (step.what == s3::listing_page::action::common_prefix) {
                                if (step.seek.empty()) {
                                    done = true;
                                } else {
                                    bound = std::move(step.seek);
                                    inclusive = true;
                                    restart = true;
                                }
                                break;
                            }
                            if (step.what == s3::listing_page::action::content) {
                                registry::listing_entry entry;
                                entry.key = key;
                                entry.size = f.size;
                                entry.etag = f.etag;
                                entry.last_modified = ref.version.created_at;
                                entry.owner_id = ref.version.created_by;
                                entry.owner_display_name = ref.version.created_by;
                                page.contents.push_back(std::move(entry));
                            }
                            bound = key;
                            inclusive = false;
                        }
                        if (ref_done)
                            break;
                        if (done || restart || last_batch)
                            break;
                    }
                    if (done || restart)
                        break;
                }
                if (done || restart)
                    break;
            }
            if (done || restart)
                break;
        }
        if (!restart)
            done = true;
    }
    page.common_prefixes = fold.common_prefixes();
    page.truncated = fold.truncated();
    page.last = fold.last();
    co_return page;
}

} // namespace depot::server::s3op
