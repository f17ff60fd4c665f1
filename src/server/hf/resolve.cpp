// HEAD and GET /{team}/{model}/resolve/{revision}/{path}: a file of the version, as the Hub serves an LFS
// file. `huggingface_hub` first sends HEAD (Accept-Encoding: identity, redirects not followed) and reads
// X-Repo-Commit (the commit it caches under; its absence is an error), X-Linked-Etag or ETag (the blob's
// name in its cache, quotes stripped) and X-Linked-Size or Content-Length (checked against the bytes it
// gets); `@huggingface/hub` sends GET with Range: bytes=0-0 and reads the same headers plus Content-Range.
// Both then GET the file, possibly by ranges. The file is served here, never redirected: a redirect to
// another host would make the clients drop the Authorization header.
#include "common/hash.hpp"
#include "common/uri.hpp"
#include "registry/service/audit.hpp"
#include "server/audit_requests.hpp"
#include "server/hf/repo.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::hf {
namespace {

/// Content-Disposition for the file's base name (RFC 6266, with the UTF-8 form for any name).
std::string disposition(std::string_view path)
{
    const auto slash = path.rfind('/');
    const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    std::string plain;
    for (char c : name)
        plain += (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20 ||
                  static_cast<unsigned char>(c) >= 0x7f)
                     ? '_'
                     : c;
    return "inline; filename*=UTF-8''" + uri_encode(name) + "; filename=\"" + plain + "\";";
}

asio::awaitable<result<response>> resolve(request_context& ctx, hub_request& req, bool head)
{
    // The access log and the audit name the file as the S3 model view would: <models bucket>/team/model/
    // revision/path.
    ctx.bucket = ctx.svc->opts.models_bucket;
    ctx.key = req.team + "/" + req.model + "/" + req.revision + "/" + req.path;
    auto repo = co_await open_repo(ctx, req);
    if (!repo)
        co_return std::move(repo).error();
    auto opened = co_await ctx.svc->models.open_file(repo->version, req.path);
    if (!opened) {
        if (opened.error().code == errc::not_found || opened.error().code == errc::no_such_key)
            co_return make_error(errc::no_such_key, "Entry not found");
        co_return std::move(opened).error();
    }
    auto handle = std::make_shared<registry::object_handle>(std::move(*opened));
    const std::uint64_t size = handle->version.size;
    std::string etag;
    {
        const auto& sha = handle->version.sha256;
        etag = sha.size() == 32 ? to_hex(sha) : handle->version.etag;
    }
    result<response> res = response{};
    if (size == 0) {
        // No byte can satisfy a range of an empty file, and a 416 would fail the clients that probe every
        // file with Range: bytes=0-0 (@huggingface/hub): the range is ignored (RFC 9110 allows it) and the
        // size given as Content-Range's complete length, which is where those clients read it.
        res->headers.set(http::field::content_type, "application/octet-stream");
        res->headers.set(http::field::content_length, "0");
        if (ctx.get("range"))
            res->headers.set(http::field::content_range, "bytes */0");
        res->head_only = head;
    } else {
        res = co_await s3op::respond_with_object(ctx, handle, nullptr, head);
        if (!res)
            co_return res;
    }
    const auto status = res->status;
    if (status == http::status::ok || status == http::status::partial_content ||
        status == http::status::not_modified) {
        res->headers.set(http::field::etag, "\"" + etag + "\"");
        res->headers.set("X-Linked-Etag", "\"" + etag + "\"");
        res->headers.set("X-Linked-Size", std::to_string(size));
        res->headers.set("X-Repo-Commit", repo->commit);
        res->headers.set(http::field::accept_ranges, "bytes");
        res->headers.set(http::field::content_disposition, disposition(req.path));
        res->headers.set("x-depot-model-version", std::to_string(repo->version.number));
    }
    if (!head && (status == http::status::ok || status == http::status::partial_content)) {
        // Recorded before the body goes out; a download must not happen unrecorded (a failure answers 500).
        const std::string details =
            "{\"via\":\"hf\",\"model\":" + registry::audit_quote(req.team + "/" + req.model) +
            ",\"ref\":" + registry::audit_quote(req.revision) +
            ",\"version\":" + std::to_string(repo->version.number) +
            ",\"commit\":" + registry::audit_quote(repo->commit) + "}";
        co_await registry::audit_log::record_model_download(*ctx.svc->db, ctx.audit,
                                                            ctx.bucket + "/" + ctx.key, req.team, details);
    }
    co_return res;
}

} // namespace

asio::awaitable<result<response>> resolve_file(request_context& ctx, hub_request& req)
{
    return resolve(ctx, req, false);
}

asio::awaitable<result<response>> resolve_file_head(request_context& ctx, hub_request& req)
{
    return resolve(ctx, req, true);
}

} // namespace depot::server::hf
