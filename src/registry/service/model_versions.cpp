// model_registry: versions - freezing a prefix into a numbered version, and reading it back (files,
// diff, open_file).
#include "registry/repo/model_versions.hpp"

#include "common/hash.hpp"
#include "registry/repo/events.hpp"
#include "registry/repo/model_detail.hpp"
#include "registry/repo/versions.hpp"
#include "registry/service/model_registry.hpp"
#include "registry/transaction.hpp"
#include "s3/listing.hpp"
#include "s3/names.hpp"

#include <algorithm>

namespace depot::registry {
using namespace model_detail;

namespace {

bool all_digits(std::string_view s)
{
    return !s.empty() && s.size() <= 9 &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// Streams segments through SHA-256, read as objects are (sealed blobs decrypted: the digest is of the
/// plaintext).
asio::awaitable<result<std::string>> hash_segments(object_service& objects, std::vector<segment> segments)
{
    hasher h(digest_kind::sha256);
    std::vector<std::byte> buf(1 << 20);
    object_handle handle;
    std::uint64_t left = 0;
    for (const auto& s : segments)
        left += s.length;
    handle.segments = std::move(segments);
    auto source = objects.read(handle, 0, left);
    while (left > 0) {
        const std::span<std::byte> window(buf.data(), std::min<std::uint64_t>(buf.size(), left));
        auto n = co_await source->read_some(window);
        if (!n)
            co_return std::move(n).error();
        if (*n == 0)
            co_return make_error(errc::io_error, "blob is shorter than the manifest says");
        h.update(std::span<const std::byte>(buf.data(), *n));
        left -= *n;
    }
    co_return h.finish();
}

} // namespace

// --- versions --------------------------------------------------------------------------------------------

asio::awaitable<result<void>> model_registry::hash_unknown_digests(const model& m)
{
    const std::string upper = m.prefix.empty() ? std::string() : s3::prefix_successor(m.prefix);
    auto conn = co_await pool_.acquire();
    const auto rows = co_await current_rows_without_sha256(*conn, m.bucket_id, m.prefix, upper);
    for (const auto id : rows) {
        auto segs = co_await object_row_segments(*conn, id);
        auto digest = co_await hash_segments(objects_, std::move(segs));
        if (!digest) {
            // Deleted meanwhile: the version will not contain it (or hash_version_files catches up).
            if (digest.error().code == errc::not_found)
                continue;
            co_return std::move(digest).error();
        }
        const pg::bytes raw(*digest);
        co_await set_object_sha256(*conn, id, raw);
    }
    co_return ok();
}

asio::awaitable<result<void>> model_registry::hash_version_files(std::int64_t version_id)
{
    auto conn = co_await pool_.acquire();
    const auto paths = co_await version_paths_without_sha256(*conn, version_id);
    for (const auto& path : paths) {
        auto segs = co_await version_file_segments(*conn, version_id, path);
        auto digest = co_await hash_segments(objects_, std::move(segs));
        if (!digest)
            co_return std::move(digest).error();
        const pg::bytes raw(*digest);
        co_await set_version_file_sha256(*conn, version_id, path, raw);
    }
    co_return ok();
}

asio::awaitable<result<model_version>> model_registry::create_version(const model& m, version_spec spec,
                                                                      const audit_context& who)
{
    if (auto hashed = co_await hash_unknown_digests(m); !hashed)
        co_return std::move(hashed).error();
    const freeze_source source{.bucket_id = m.bucket_id,
                               .prefix = m.prefix,
                               .upper = m.prefix.empty() ? std::string() : s3::prefix_successor(m.prefix),
                               .as_of_seq = spec.as_of_seq};
    std::vector<std::string> unreferenced; // blobs completed uploads released, removed after the commit
    auto work = [&](pg::connection& c) -> asio::awaitable<result<std::int64_t>> {
        co_await events::lock_model(c, m.id);
        const auto locked = co_await lock_next_version(c, m.id);
        if (!locked)
            co_return make_error(errc::not_found, "No such model");
        const auto number = *locked;
        if (spec.label) {
            const bool taken = co_await label_taken(c, m.id, *spec.label);
            if (taken)
                co_return make_error(errc::conflict,
                                     "The label '" + *spec.label +
                                         "' already names a version or an alias of this model");
        }
        if (spec.parent && (*spec.parent < 1 || *spec.parent >= number))
            co_return make_error(errc::invalid_argument, "The parent version does not exist", "parent");
        // Writers hold the bucket's write lock shared while they publish: taking it exclusively waits for
        // those in flight and queues new ones until the commit, so the files are the prefix at one moment
        // (and, unlike a row lock, a steady stream of writers cannot starve the version).
        if (!co_await lock_bucket_writes(c, m.bucket_id))
            co_return make_error(errc::no_such_bucket, "The model's bucket no longer exists");
        const auto vid = co_await insert_version(c, m.id, number, spec, who.actor);
        // The uploads are completed into the prefix in the version's transaction: all of them and the
        // version, or nothing. (A retried transaction starts over.)
        unreferenced.clear();
        const write_preconditions unconditional;
        for (const auto& u : spec.uploads) {
            auto done = co_await multipart_.complete_in(c, u.upload, u.parts, unconditional, unreferenced);
            if (!done)
                co_return make_error(done.error().code, "Upload of '" + u.path + "': " + done.error().message,
                                     "uploads");
        }
        // The files, their blob references and the version's totals, then the model's version counter.
        co_await freeze_prefix(c, vid, source);
        co_await advance_next_version(c, m.id);
        co_await record(c, m.id, vid, "created", who, spec.description, std::nullopt, "draft");
        co_await emit_version_event(c, m, "version.created", vid, static_cast<int>(number), spec.label,
                                    "draft", who, spec.description);
        if (!m.policy.protects("latest"))
            co_await move_alias(c, m, "latest", vid, static_cast<int>(number), who);
        co_return vid;
    };
    auto created = co_await transact(pool_, work);
    if (!created)
        co_return std::move(created).error();
    co_await multipart_.release(std::move(unreferenced));
    if (auto hashed = co_await hash_version_files(*created); !hashed)
        co_return std::move(hashed).error();
    auto conn = co_await pool_.acquire();
    co_return co_await read_version(*conn, *created);
}

asio::awaitable<std::vector<model_version>> model_registry::versions(std::int64_t model_id, int before,
                                                                     std::size_t limit)
{
    auto conn = co_await pool_.acquire();
    co_return co_await versions_before(*conn, model_id, before, static_cast<std::int64_t>(limit));
}

asio::awaitable<result<model_version>> model_registry::get_version(const model& m, std::string_view ref,
                                                                   bool aliases)
{
    auto conn = co_await pool_.acquire();
    std::optional<model_version> v;
    if (all_digits(ref)) {
        const auto number = static_cast<std::int64_t>(std::stoll(std::string(ref)));
        v = co_await version_by_number(*conn, m.id, number);
    } else {
        v = co_await version_by_label(*conn, m.id, ref);
        if (!v && aliases)
            v = co_await version_by_alias(*conn, m.id, ref);
    }
    if (!v)
        co_return make_error(errc::not_found, "No such version");
    co_return std::move(*v);
}

asio::awaitable<std::vector<model_file>>
model_registry::files(std::int64_t version_id, std::string_view after, std::size_t limit, bool inclusive)
{
    auto conn = co_await pool_.acquire();
    co_return co_await version_files(*conn, version_id, after, static_cast<std::int64_t>(limit), inclusive);
}

asio::awaitable<file_diff> model_registry::diff(std::int64_t from_version, std::int64_t to_version)
{
    auto conn = co_await pool_.acquire();
    co_return co_await version_diff(*conn, from_version, to_version);
}

asio::awaitable<result<object_handle>> model_registry::open_file(const model_version& v,
                                                                 std::string_view path)
{
    auto conn = co_await pool_.acquire();
    auto f = co_await version_file(*conn, v.id, path);
    if (!f)
        co_return make_error(errc::no_such_key, "The specified key does not exist.");
    object_handle h;
    h.segments = co_await version_file_segments(*conn, v.id, path);
    h.version.key = f->path;
    h.version.version_id = "null";
    h.version.size = f->size;
    h.version.etag = f->etag;
    h.version.sha256 = f->sha256;
    h.version.owner_id = v.created_by;
    h.version.owner_display_name = v.created_by;
    h.version.last_modified = v.created_at;
    h.version.headers.content_type = f->content_type;
    co_return h;
}

} // namespace depot::registry
