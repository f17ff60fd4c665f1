#include "registry/service/snapshot_service.hpp"

#include "registry/repo/audit.hpp"
#include "registry/repo/bucket_names.hpp"
#include "registry/repo/events.hpp"
#include "registry/repo/snapshots.hpp"
#include "registry/repo/versions.hpp"
#include "registry/service/content.hpp"
#include "registry/service/object_copy.hpp"
#include "registry/transaction.hpp"
#include "s3/names.hpp"

#include <algorithm>

namespace depot::registry {
namespace {

/// The key a snapshot key is restored to.
std::string restored_key(std::string_view key, std::string_view prefix,
                         const std::optional<std::string>& target_prefix)
{
    if (!target_prefix)
        return std::string(key);
    return *target_prefix + std::string(key.substr(prefix.size()));
}

} // namespace

bool is_snapshot_key(std::string_view key) noexcept
{
    return key.starts_with(snapshot_key_prefix) || key == snapshot_key_prefix.substr(0, 10);
}

std::string_view key_below_snapshot_root(std::string_view view_key) noexcept
{
    const auto rest = view_key.substr(std::min(view_key.size(), snapshot_key_prefix.size()));
    const auto slash = rest.find('/');
    return slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
}

std::string_view live_key_of(std::string_view key) noexcept
{
    return is_snapshot_key(key) ? key_below_snapshot_root(key) : key;
}

bool valid_snapshot_name(std::string_view name) noexcept
{
    if (name.empty() || name.size() > 63)
        return false;
    auto alnum = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    };
    if (!alnum(name.front()))
        return false;
    for (char c : name)
        if (!alnum(c) && c != '.' && c != '_' && c != '-')
            return false;
    return true;
}

asio::awaitable<result<snapshot>> snapshot_service::create(const audit_context& who, std::int64_t bucket_id,
                                                           std::string_view name, std::string_view prefix,
                                                           std::string_view created_by)
{
    if (!valid_snapshot_name(name))
        co_return make_error(errc::invalid_argument,
                             "A snapshot name is 1 to 63 characters of A-Z, a-z, 0-9, '.', '_' and '-', "
                             "starting with a letter or digit",
                             "name");
    if (prefix.size() > 1024 || is_snapshot_key(prefix))
        co_return make_error(errc::invalid_argument,
                             "A snapshot prefix is at most 1024 bytes and not inside .snapshots/", "prefix");
    if (!prefix.empty())
        if (auto valid = s3::validate_object_key(prefix); !valid)
            co_return make_error(errc::invalid_argument, "The prefix is not a valid object key prefix",
                                 "prefix");
    co_return co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<snapshot>> {
        if (!co_await lock_bucket_writes(c, bucket_id))
            co_return make_error(errc::no_such_bucket, "The specified bucket does not exist");
        // The snapshot itself: one row, whatever the number of objects.
        auto inserted = co_await insert_snapshot(c, bucket_id, name, prefix, created_by);
        if (!inserted)
            co_return make_error(errc::already_exists,
                                 "The bucket already has a snapshot named " + std::string(name), "name");
        auto made = std::move(*inserted);
        const std::string bucket = co_await bucket_name_of(c, bucket_id);
        const std::string data =
            "{\"bucket\":" + events::quote(bucket) + ",\"snapshot\":{\"name\":" + events::quote(made.name) +
            ",\"prefix\":" + events::quote(made.prefix) + ",\"sequence\":" + std::to_string(made.seq) +
            "},\"actor\":" + events::quote(created_by) + "}";
        events::event_spec e{.type = "snapshot.created", .bucket_id = bucket_id, .data_json = data};
        co_await events::emit(c, e);
        co_await append_audit(c, who, "snapshot.create", bucket + "/.snapshots/" + made.name, "",
                              "{\"prefix\":" + audit_quote(made.prefix) +
                                  ",\"sequence\":" + std::to_string(made.seq) + "}");
        co_return made;
    });
}

asio::awaitable<std::optional<snapshot>> snapshot_service::get(std::int64_t bucket_id, std::string_view name)
{
    auto conn = co_await pool_.acquire();
    co_return co_await find_snapshot(*conn, bucket_id, name);
}

asio::awaitable<std::vector<snapshot>> snapshot_service::list(std::int64_t bucket_id, std::string_view after,
                                                              std::size_t limit)
{
    auto conn = co_await pool_.acquire();
    co_return co_await snapshots_after(*conn, bucket_id, after, static_cast<std::int64_t>(limit));
}

asio::awaitable<result<void>>
snapshot_service::remove(const audit_context& who, std::int64_t bucket_id, std::string_view name,
                         std::function<result<void>(std::string_view)> may_purge)
{
    std::vector<std::string> unreferenced;
    auto removed = co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
        unreferenced.clear();
        if (!co_await lock_bucket_writes(c, bucket_id))
            co_return make_error(errc::no_such_bucket, "The specified bucket does not exist");
        if (!co_await delete_snapshot(c, bucket_id, name))
            co_return make_error(errc::not_found, "The bucket has no snapshot named " + std::string(name));
        // Purged rows that no remaining snapshot sees go, with their references (the segments are read from
        // the statement's snapshot, before the cascade): each of their keys is the caller's to purge.
        if (may_purge) {
            const auto keys = co_await unseen_purged_keys(c, bucket_id);
            for (const auto& key : keys)
                if (auto allowed = may_purge(key); !allowed)
                    co_return std::move(allowed).error();
        }
        auto blobs = co_await delete_unseen_purged_versions(c, bucket_id);
        co_await drop_references(c, blobs, unreferenced);
        const std::string bucket = co_await bucket_name_of(c, bucket_id);
        co_await append_audit(c, who, "snapshot.delete", bucket + "/.snapshots/" + std::string(name));
        co_return ok();
    });
    co_await remove_blobs(store_, std::move(unreferenced));
    co_return removed;
}

asio::awaitable<result<restore_outcome>> snapshot_service::restore(const audit_context& who,
                                                                   restore_request req)
{
    auto snap = co_await get(req.bucket_id, req.snapshot);
    if (!snap)
        co_return make_error(errc::not_found, "The bucket has no snapshot named " + req.snapshot);
    const std::string prefix = req.prefix.value_or(snap->prefix);
    if (req.target_prefix && is_snapshot_key(*req.target_prefix))
        co_return make_error(errc::invalid_argument, "Nothing can be restored into .snapshots/",
                             "target_prefix");

    // The snapshot's versions never change: list them (and check every target key) first, then copy them
    // all in one transaction, so a restore is seen whole or not at all and a failure changes nothing.
    struct planned
    {
        std::string key;
        std::int64_t source_row = 0;
    };
    std::vector<planned> plan;
    std::string after;
    bool more = true;
    while (more) {
        list_request page_request;
        page_request.bucket_id = snap->bucket_id;
        page_request.prefix = prefix;
        page_request.after = after;
        page_request.as_of = snap->seq;
        page_request.within = snap->prefix;
        auto page = co_await objects_.list(std::move(page_request));
        if (!page)
            co_return std::move(page).error();
        more = page->truncated;
        after = page->last;
        for (const auto& entry : page->contents) {
            std::string key = restored_key(entry.key, prefix, req.target_prefix);
            if (is_snapshot_key(key))
                co_return make_error(errc::invalid_argument, "Nothing can be restored into .snapshots/",
                                     "target_prefix");
            if (auto valid = s3::validate_object_key(key); !valid)
                co_return std::move(valid).error();
            auto source = co_await objects_.open_as_of(snap->bucket_id, entry.key, snap->seq);
            if (!source)
                co_return std::move(source).error();
            if (req.check)
                if (auto allowed = req.check(entry.key, key, !source->version.tags.empty()); !allowed)
                    co_return std::move(allowed).error();
            // A restore references the snapshot's bytes as they are stored: into a bucket that encrypts what
            // is written to it, a plaintext source would be a plaintext object there.
            if (!req.target->encryption.empty() && source->version.sse.empty())
                co_return make_error(errc::conflict,
                                     "The target bucket encrypts new objects (" + req.target->encryption +
                                         ") and '" + entry.key +
                                         "' is stored unencrypted in the snapshot: a restore references the "
                                         "snapshot's bytes and cannot encrypt them. Restore into a bucket "
                                         "without default encryption, or copy the objects");
            plan.push_back(planned{std::move(key), source->version.row_id});
        }
    }

    std::vector<std::string> unreferenced;
    auto restored =
        co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<restore_outcome>> {
            unreferenced.clear();
            restore_outcome out;
            auto mode = co_await lock_bucket_versioning(c, req.target->id);
            if (!mode)
                co_return make_error(errc::no_such_bucket, "The specified bucket does not exist");
            for (const auto& p : plan) {
                copy_object_request copy;
                copy.target = req.target;
                copy.key = p.key;
                copy.owner_id = req.owner_id;
                copy.expected_source_row = p.source_row;
                copy.source_version_pinned = true;
                auto made = co_await copy_version_in(c, *mode, copy, unreferenced);
                if (!made)
                    co_return std::move(made).error();
                ++out.objects;
                out.bytes += static_cast<std::int64_t>(made->size);
            }
            const std::string source = co_await bucket_name_of(c, req.bucket_id);
            co_await append_audit(
                c, who, "snapshot.restore", source + "/.snapshots/" + req.snapshot, "",
                "{\"target\":" + audit_quote(req.target->name + "/" + req.target_prefix.value_or("")) +
                    ",\"objects\":" + std::to_string(out.objects) + "}");
            co_return out;
        });
    if (!restored)
        unreferenced.clear(); // rolled back: nothing was released
    co_await remove_blobs(store_, std::move(unreferenced));
    co_return restored;
}

} // namespace depot::registry
