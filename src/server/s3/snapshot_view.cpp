// The read-only S3 view of a bucket's snapshots: s3://<bucket>/.snapshots/<name>/<key> reads <key> as it
// was when snapshot <name> was taken. Unchanged clients (aws cli, rclone, boto3) list and download a
// snapshot through it: GetObject/HeadObject (with Range and conditionals) and ListObjects/ListObjectsV2
// under .snapshots/; `prefix=.snapshots/ delimiter=/` lists the snapshot names as common prefixes. Writes
// under .snapshots/ answer AccessDenied (the dispatcher and DeleteObjects refuse them), and regular
// listings never show it since no key can be stored there. Access is the bucket's: its owner (or an admin).
#include "registry/service/snapshot_service.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

#include <algorithm>
#include <array>

namespace depot::server::s3op {
namespace {

/// ".snapshots/<name>/" of a snapshot.
std::string root_of(std::string_view name)
{
    return std::string(registry::snapshot_key_prefix) + std::string(name) + "/";
}

/// The listing bound below a snapshot's root: the part of `after` inside it, "" when `after` sorts before
/// it, nullopt when after all of it.
std::optional<std::string> after_within(std::string_view after, std::string_view root)
{
    if (after.starts_with(root))
        return std::string(after.substr(root.size()));
    if (after < root)
        return std::string();
    return std::nullopt;
}

/// One snapshot's page of keys, re-rooted under `root`.
asio::awaitable<result<registry::list_page>> list_one(request_context& ctx, const registry::snapshot& snap,
                                                      std::string_view root, registry::list_request req)
{
    registry::list_page page;
    auto after = after_within(req.after, root);
    if (!after)
        co_return page;
    req.bucket_id = snap.bucket_id;
    req.prefix = req.prefix.substr(std::min(req.prefix.size(), root.size()));
    req.after = std::move(*after);
    req.as_of = snap.seq;
    req.within = snap.prefix;
    auto inner = co_await ctx.svc->objects.list(std::move(req));
    if (!inner)
        co_return std::move(inner).error();
    page = std::move(*inner);
    for (auto& e : page.contents)
        e.key.insert(0, root);
    for (auto& p : page.common_prefixes)
        p.insert(0, root);
    if (!page.last.empty())
        page.last.insert(0, root);
    co_return page;
}

/// Every snapshot of a bucket, in the byte order of their roots ("a-b/" sorts before "a/").
asio::awaitable<std::vector<registry::snapshot>> all_snapshots(request_context& ctx, std::int64_t bucket_id)
{
    std::vector<registry::snapshot> all;
    std::string after;
    for (;;) {
        auto page = co_await ctx.svc->snapshots.list(bucket_id, after, 1000);
        if (page.empty())
            break;
        after = page.back().name;
        for (auto& s : page)
            all.push_back(std::move(s));
    }
    std::sort(all.begin(), all.end(), [](const registry::snapshot& a, const registry::snapshot& b) {
        return a.name + "/" < b.name + "/";
    });
    co_return all;
}

} // namespace

asio::awaitable<result<registry::object_handle>>
open_snapshot_key(request_context& ctx, std::int64_t bucket_id, std::string_view view_key)
{
    const std::string_view path =
        view_key.substr(std::min(view_key.size(), registry::snapshot_key_prefix.size()));
    const auto slash = path.find('/');
    if (slash == std::string_view::npos || slash + 1 == path.size())
        co_return make_error(errc::no_such_key, "The specified key does not exist.");
    const std::string_view key = path.substr(slash + 1);
    auto snap = co_await ctx.svc->snapshots.get(bucket_id, path.substr(0, slash));
    if (!snap || !key.starts_with(snap->prefix))
        co_return make_error(errc::no_such_key, "The specified key does not exist.");
    co_return co_await ctx.svc->objects.open_as_of(bucket_id, key, snap->seq);
}

asio::awaitable<result<registry::object_handle>>
open_copy_source(request_context& ctx, std::int64_t bucket_id, std::string_view key,
                 const std::optional<std::string>& version_id)
{
    if (!registry::is_snapshot_key(key))
        co_return co_await ctx.svc->objects.open_version(bucket_id, key, version_id);
    if (version_id)
        co_return make_error(errc::invalid_argument, "A snapshot has no object versions",
                             "x-amz-copy-source");
    co_return co_await open_snapshot_key(ctx, bucket_id, key);
}

asio::awaitable<result<response>> read_snapshot_object(request_context& ctx, bool head)
{
    if (ctx.param("versionId"))
        co_return make_error(errc::invalid_argument, "A snapshot has no object versions", "versionId");
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto opened = co_await open_snapshot_key(ctx, bucket->id, ctx.key);
    if (!opened)
        co_return std::move(opened).error();
    auto handle = std::make_shared<registry::object_handle>(std::move(*opened));
    co_return co_await respond_with_object(ctx, std::move(handle), nullptr, head);
}

asio::awaitable<result<registry::list_page>>
list_snapshot_view(request_context& ctx, const registry::bucket& bucket, registry::list_request req)
{
    const std::string_view rest = std::string_view(req.prefix).substr(registry::snapshot_key_prefix.size());
    // Inside one snapshot: its keys as of its sequence number.
    if (auto slash = rest.find('/'); slash != std::string_view::npos) {
        auto snap = co_await ctx.svc->snapshots.get(bucket.id, rest.substr(0, slash));
        if (!snap) {
            registry::list_page none;
            co_return none;
        }
        const std::string root = root_of(snap->name);
        co_return co_await list_one(ctx, *snap, root, std::move(req));
    }
    // Above the snapshots: their names (roots) as common prefixes, or their keys one snapshot after the
    // other when the delimiter does not cut at the root.
    registry::list_page page;
    if (req.max_keys == 0)
        co_return page;
    auto snaps = co_await all_snapshots(ctx, bucket.id);
    std::size_t count = 0;
    for (const auto& snap : snaps) {
        const std::string root = root_of(snap.name);
        if (!std::string_view(root).starts_with(req.prefix))
            continue;
        if (count == req.max_keys) {
            page.truncated = true;
            break;
        }
        const std::string_view below = std::string_view(root).substr(req.prefix.size());
        if (auto cut = req.delimiter.empty() ? std::string_view::npos : below.find(req.delimiter);
            cut != std::string_view::npos) {
            std::string common = req.prefix + std::string(below.substr(0, cut + req.delimiter.size()));
            if (common <= req.after ||
                (!page.common_prefixes.empty() && page.common_prefixes.back() == common))
                continue;
            page.common_prefixes.push_back(common);
            page.last = std::move(common);
            ++count;
            continue;
        }
        registry::list_request inner = req;
        inner.max_keys = req.max_keys - count;
        auto part = co_await list_one(ctx, snap, root, std::move(inner));
        if (!part)
            co_return std::move(part).error();
        count += part->contents.size() + part->common_prefixes.size();
        for (auto& e : part->contents)
            page.contents.push_back(std::move(e));
        for (auto& p : part->common_prefixes)
            page.common_prefixes.push_back(std::move(p));
        if (!part->last.empty())
            page.last = std::move(part->last);
        if (part->truncated) {
            page.truncated = true;
            break;
        }
    }
    co_return page;
}

} // namespace depot::server::s3op
