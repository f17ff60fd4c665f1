// GET /api/models/{team}/{model}/tree/{revision}[/{path}] and POST .../paths-info/{revision}: the Hub's file
// listings. Newer clients list a revision's files with the tree (snapshot downloads: recursive, at the
// commit model info gave) and ask paths-info for the entry of the file they are about to cache. Entries
// are Hub tree entries: {"type": "file", "path", "size", "oid", "lfs": {"oid": sha256, "size",
// "pointerSize"}} and {"type": "directory", "path", "size": 0, "oid"}; with expand, files also get
// "lastCommit" (the version's commit). The whole listing is one page (no Link header).
#include "common/uri.hpp"
#include "server/api/http_api.hpp"
#include "server/hf/repo.hpp"
#include "server/s3/common.hpp"

#include <boost/json.hpp>
#include <map>
#include <set>

namespace depot::server::hf {
namespace {

namespace json = boost::json;

bool truthy(std::optional<std::string_view> v)
{
    return v && (*v == "1" || *v == "true" || *v == "True");
}

json::object file_entry(const registry::model_file& f, const repo_at& repo, bool expand)
{
    const std::string etag = file_etag(f);
    json::object e{{"type", "file"},
                   {"oid", object_id("blob " + etag)},
                   {"size", f.size},
                   {"path", f.path},
                   {"lfs", json::object{{"oid", etag}, {"size", f.size}, {"pointerSize", lfs_pointer_size}}}};
    if (expand)
        e["lastCommit"] = json::object{{"id", repo.commit},
                                       {"title", "Version " + std::to_string(repo.version.number)},
                                       {"date", api::iso8601(repo.version.created_at)}};
    return e;
}

json::object directory_entry(std::string_view path, const repo_at& repo)
{
    return json::object{{"type", "directory"},
                        {"oid", object_id("tree " + repo.commit + " " + std::string(path))},
                        {"size", 0},
                        {"path", path}};
}

} // namespace

asio::awaitable<result<response>> list_tree(request_context& ctx, hub_request& req)
{
    auto repo = co_await open_repo(ctx, req);
    if (!repo)
        co_return std::move(repo).error();
    auto files = co_await all_files(ctx, repo->version);
    if (!files)
        co_return std::move(files).error();
    const bool recursive = truthy(ctx.param("recursive"));
    const bool expand = truthy(ctx.param("expand"));
    std::string base = req.path;
    while (!base.empty() && base.back() == '/')
        base.pop_back();
    const std::string prefix = base.empty() ? "" : base + "/";

    // Directories and files by path: the listing comes out in path order.
    std::map<std::string, json::object> entries;
    bool found = base.empty();
    for (const auto& f : *files) {
        if (!std::string_view(f.path).starts_with(prefix))
            continue;
        found = true;
        const std::string_view rest = std::string_view(f.path).substr(prefix.size());
        // Every directory between the listed one and the file (only the first without recursion).
        for (auto slash = rest.find('/'); slash != std::string_view::npos;
             slash = rest.find('/', slash + 1)) {
            const std::string dir = prefix + std::string(rest.substr(0, slash));
            if (!entries.count(dir))
                entries.emplace(dir, directory_entry(dir, *repo));
            if (!recursive)
                break;
        }
        if (recursive || rest.find('/') == std::string_view::npos)
            entries.emplace(f.path, file_entry(f, *repo, expand));
    }
    if (!found)
        co_return make_error(errc::no_such_key, "Entry not found: " + base);
    json::array out;
    for (auto& [path, e] : entries)
        out.push_back(std::move(e));
    co_return api::json_response(out);
}

asio::awaitable<result<response>> paths_info(request_context& ctx, hub_request& req)
{
    // The body: JSON {"paths": [...], "expand": bool} (JavaScript) or a form, paths=a&paths=b&expand=True
    // (Python).
    auto text = co_await s3op::read_small_body(ctx, 1 << 20);
    if (!text)
        co_return std::move(text).error();
    std::vector<std::string> paths;
    bool expand = false;
    const auto type = ctx.get("content-type").value_or("");
    if (type.starts_with("application/json")) {
        boost::system::error_code ec;
        auto value = json::parse(*text, ec);
        if (ec || !value.is_object())
            co_return make_error(errc::invalid_argument, "The request body must be a JSON object");
        if (duplicate_member(*text))
            co_return make_error(
                errc::invalid_argument,
                "The request body names a member twice in one object: each name may appear once");
        const auto& o = value.as_object();
        if (auto it = o.find("paths"); it != o.end()) {
            if (it->value().is_string())
                paths.emplace_back(it->value().as_string());
            else if (it->value().is_array())
                for (const auto& p : it->value().as_array())
                    if (p.is_string())
                        paths.emplace_back(p.as_string());
        }
        if (auto it = o.find("expand"); it != o.end() && it->value().is_bool())
            expand = it->value().as_bool();
    } else {
        auto form = parse_query(*text);
        if (!form)
            co_return make_error(errc::invalid_argument, "The request body is not a valid form");
        for (auto& [name, value] : *form) {
            if (name == "paths")
                paths.push_back(value);
            else if (name == "expand")
                expand = truthy(std::string_view(value));
        }
    }
    auto repo = co_await open_repo(ctx, req);
    if (!repo)
        co_return std::move(repo).error();
    auto files = co_await all_files(ctx, repo->version);
    if (!files)
        co_return std::move(files).error();

    // A path is a file, a directory (some file lies under it), or absent (left out, as the Hub does).
    std::set<std::string> wanted(paths.begin(), paths.end());
    json::array out;
    for (auto path : wanted) {
        while (!path.empty() && path.back() == '/')
            path.pop_back();
        auto it =
            std::lower_bound(files->begin(), files->end(), path,
                             [](const registry::model_file& f, const std::string& p) { return f.path < p; });
        if (it != files->end() && it->path == path) {
            out.push_back(file_entry(*it, *repo, expand));
            continue;
        }
        const std::string prefix = path + "/";
        auto under =
            std::lower_bound(files->begin(), files->end(), prefix,
                             [](const registry::model_file& f, const std::string& p) { return f.path < p; });
        if (!path.empty() && under != files->end() && std::string_view(under->path).starts_with(prefix))
            out.push_back(directory_entry(path, *repo));
    }
    co_return api::json_response(out);
}

} // namespace depot::server::hf
