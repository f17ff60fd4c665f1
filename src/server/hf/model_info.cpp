// GET /api/models/{team}/{model}[/revision/{revision}]: the Hub's model info. Clients read `sha` (the commit
// to download at), `siblings[].rfilename` (the files), and `id`, `private`, `lastModified`; sizes and LFS
// digests are given for every file, as the Hub gives them with ?blobs=true.
#include "server/api/http_api.hpp"
#include "server/hf/repo.hpp"

#include <boost/json.hpp>
#include <cstdio>

namespace depot::server::hf {

asio::awaitable<result<response>> model_info(request_context& ctx, hub_request& req)
{
    namespace json = boost::json;
    auto repo = co_await open_repo(ctx, req);
    if (!repo)
        co_return std::move(repo).error();
    auto files = co_await all_files(ctx, repo->version);
    if (!files)
        co_return std::move(files).error();

    json::array siblings;
    for (const auto& f : *files) {
        const std::string etag = file_etag(f);
        siblings.push_back(json::object{
            {"rfilename", f.path},
            {"size", f.size},
            {"blobId", object_id("blob " + etag)},
            {"lfs", json::object{{"sha256", etag}, {"size", f.size}, {"pointerSize", lfs_pointer_size}}}});
    }
    char id[32];
    std::snprintf(id, sizeof id, "%024llx", static_cast<unsigned long long>(repo->model.id));
    const std::string name = repo->model.team + "/" + repo->model.name;
    json::object body{{"_id", id},
                      {"id", name},
                      {"modelId", name},
                      {"author", repo->model.team},
                      {"sha", repo->commit},
                      {"createdAt", api::iso8601(repo->model.created_at)},
                      {"lastModified", api::iso8601(repo->version.created_at)},
                      {"private", true},
                      {"disabled", false},
                      {"gated", false},
                      {"downloads", 0},
                      {"likes", 0},
                      {"tags", json::array{}},
                      {"siblings", std::move(siblings)},
                      {"spaces", json::array{}},
                      {"usedStorage", repo->version.total_bytes},
                      {"depot", json::object{{"version", repo->version.number},
                                             {"state", repo->version.state},
                                             {"label", repo->version.label ? json::value(*repo->version.label)
                                                                           : json::value(nullptr)}}}};
    if (!repo->version.framework.empty())
        body["library_name"] = repo->version.framework;
    co_return api::json_response(body);
}

} // namespace depot::server::hf
