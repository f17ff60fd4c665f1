// model_registry: versions - freezing a prefix into a numbered version, and reading it back (files,
// diff, open_file).
#include "registry/repo/model_versions.hpp"

#include "common/hash.hpp"
#include "registry/repo/events.hpp"
#include "registry/repo/model_detail.hpp"
#include "registry/repo/multipart_uploads.hpp"
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

/// A segment list's identity: the same blobs at the same offsets and lengths are the same bytes (blobs are
/// immutable), so a digest computed for one list holds for every file with that list.
std::string segments_key(const std::vector<segment>& segments)
{
    std::string key;
    for (const auto& s : segments)
        key += std::to_string(s.blob_row) + ':' + std::to_string(s.offset) + ':' + std::to_string(s.length) +
               ';';
    return key;
}

bool customer_sealed(const std::vector<segment>& segments)
{
    return std::any_of(segments.begin(), segments.end(),
                       [](const segment& s) { return s.sealed == sealing::customer; });
}

} // namespace

// --- versions --------------------------------------------------------------------------------------------

asio::awaitable<result<void>> model_registry::hash_unknown_digests(const freeze_source& source,
                                                                   const std::vector<version_upload>& uploads,
                                                                   known_digests& known)
{
    auto conn = co_await pool_.acquire();
    // The files the version would freeze now whose digest is not recorded (objects uploaded in parts). Files
    // under a customer's key are not read (the key is not ours): the version refuses them by name.
    const auto rows = co_await rows_without_sha256(*conn, source);
    for (const auto id : rows) {
        auto segs = co_await object_row_segments(*conn, id);
        if (customer_sealed(segs))
            continue;
        auto key = segments_key(segs);
        auto it = known.find(key);
        if (it == known.end()) {
            auto digest = co_await hash_segments(objects_, std::move(segs));
            if (!digest) {
                // Deleted meanwhile: the version will not contain it (or the transaction sees the change).
                if (digest.error().code == errc::not_found)
                    continue;
                co_return std::move(digest).error();
            }
            it = known.emplace(std::move(key), std::move(*digest)).first;
        }
        const pg::bytes raw(it->second);
        co_await set_object_sha256(*conn, id, raw);
    }
    // The uploads the version completes: their objects are the listed parts' segments in order.
    for (const auto& u : uploads) {
        auto stored = co_await stored_parts(*conn, u.upload.row);
        std::vector<segment> segs;
        bool complete = true;
        for (const auto& w : u.parts) {
            auto it = stored.find(w.part_number);
            if (it == stored.end()) {
                complete = false; // the completion refuses it with S3's words
                break;
            }
            segs.insert(segs.end(), it->second.segments.begin(), it->second.segments.end());
        }
        if (!complete || customer_sealed(segs))
            continue;
        auto key = segments_key(segs);
        if (known.contains(key))
            continue;
        auto digest = co_await hash_segments(objects_, std::move(segs));
        if (!digest) {
            if (digest.error().code == errc::not_found)
                continue;
            co_return std::move(digest).error();
        }
        known.emplace(std::move(key), std::move(*digest));
    }
    co_return ok();
}

asio::awaitable<result<model_version>> model_registry::create_version(const model& m, version_spec spec,
                                                                      const audit_context& who)
{
    const freeze_source source{.bucket_id = m.bucket_id,
                               .prefix = m.prefix,
                               .upper = m.prefix.empty() ? std::string() : s3::prefix_successor(m.prefix),
                               .as_of_seq = spec.as_of_seq};
    // A version is complete when it becomes visible: every file's SHA-256 is recorded in the transaction that
    // creates it. The digests are computed before it (reading the bytes while the bucket's writers wait would
    // stall them); a file that appears between the two (a multipart upload completed into the prefix
    // meanwhile) sends the version round again, and on the last round is hashed inside the transaction.
    constexpr int rounds = 3;
    known_digests known;
    const std::vector<version_upload> hashed_already; // the uploads' digests stay known after round 1
    for (int round = 1;; ++round) {
        const auto& uploads = round == 1 ? spec.uploads : hashed_already;
        if (auto hashed = co_await hash_unknown_digests(source, uploads, known); !hashed)
            co_return std::move(hashed).error();
        const bool last_round = round == rounds;
        bool raced = false;
        std::vector<std::string> unreferenced; // blobs completed uploads released, removed after the commit
        auto work = [&](pg::connection& c) -> asio::awaitable<result<model_version>> {
            raced = false;
            co_await events::lock_model(c, m.id);
            const auto locked = co_await lock_next_version(c, m.id);
            if (!locked)
                co_return make_error(errc::not_found, "No such model");
            const auto number = *locked;
            if (spec.label) {
                // Names clients resolve by default (the Hub's main and HEAD, latest) and the model's
                // protected aliases are a maintainer's: a writer's label taking one would be served under it,
                // unreviewed, and keep the alias from ever being set.
                const std::string_view name = *spec.label;
                if (name == "main" || name == "HEAD" || name == "latest" || m.policy.protects(name))
                    co_return make_error(errc::conflict,
                                         "The label '" + *spec.label +
                                             "' is reserved for an alias (main, HEAD, latest and the model's "
                                             "protected aliases)",
                                         "label");
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
            // The team reads the bucket through its model because whoever bound it could: the bucket's owner
            // as a member of the team, or an installation admin. An owner who left takes the binding along.
            if (auto owner = co_await orphaned_binding_owner(c, m.id))
                co_return make_error(errc::conflict,
                                     "The model's bucket belongs to '" + *owner +
                                         "', who bound it and is no longer a member of the team: no new "
                                         "version reads it (the versions made stay). Bind a new model to a "
                                         "bucket of a member's, or add '" +
                                         *owner + "' back");
            const auto vid = co_await insert_version(c, m.id, number, spec, who.actor);
            // The uploads are completed into the prefix in the version's transaction: all of them and the
            // version, or nothing. (A retried transaction starts over.) Their digests were computed from the
            // parts they list; a part replaced since has other segments, and is hashed below.
            unreferenced.clear();
            const write_preconditions unconditional;
            for (const auto& u : spec.uploads) {
                auto done =
                    co_await multipart_.complete_in(c, who, u.upload, u.parts, unconditional, unreferenced);
                if (!done)
                    co_return make_error(done.error().code,
                                         "Upload of '" + u.path + "': " + done.error().message, "uploads");
                const auto segs = co_await object_row_segments(c, done->row_id);
                if (auto it = known.find(segments_key(segs)); it != known.end()) {
                    const pg::bytes raw(it->second);
                    co_await set_object_sha256(c, done->row_id, raw);
                }
            }
            // The files, their blob references and the version's totals, then the model's version counter.
            co_await freeze_prefix(c, vid, source);
            // Keys are any S3 keys, but a version's paths are joined onto directories by whoever downloads
            // it (the Hub's clients, caches warmed by webhooks): '..' there would write outside them.
            if (auto unsafe = co_await unsafe_file_path(c, vid))
                co_return make_error(
                    errc::invalid_argument,
                    "The file '" + *unsafe +
                        "' has a path a client cannot write as it is (a leading or trailing "
                        "'/', an empty segment, a segment of only dots and spaces such as '..' "
                        "or '.. ', one ending in a dot or a space, a Windows device name such as "
                        "'CON' or 'aux.txt', a drive letter such as 'C:', or a control "
                        "character): rename it or move it out of the prefix");
            if (spec.may_read) {
                constexpr std::int64_t page = 1000;
                std::string after;
                for (bool first = true;; first = false) {
                    const auto files = co_await version_files(c, vid, after, page, first);
                    for (const auto& f : files)
                        if (!spec.may_read(m.prefix + f.path))
                            co_return make_error(errc::access_denied,
                                                 "The bucket's policy denies you s3:GetObject on '" +
                                                     m.prefix + f.path + "', which the version would hold");
                    if (files.size() < static_cast<std::size_t>(page))
                        break;
                    after = files.back().path;
                }
            }
            // A file under a customer's key (SSE-C) can be read only with that key, which Depot never keeps:
            // its digest cannot be computed and the version could not serve it. Refused by name; other
            // versions (another model, a snapshot without it) are not concerned.
            if (auto sealed = co_await customer_sealed_file(c, vid)) {
                const bool uploaded = std::any_of(spec.uploads.begin(), spec.uploads.end(),
                                                  [&](const version_upload& u) { return u.path == *sealed; });
                co_return make_error(errc::conflict,
                                     "The file '" + *sealed +
                                         "' is encrypted with a customer-provided key (SSE-C): a version "
                                         "can hold only files whose SHA-256 is known and that it can serve "
                                         "without the customer's key. Delete or move it, or store it with "
                                         "SSE-S3 or unencrypted",
                                     uploaded ? "uploads" : "");
            }
            const auto unhashed = co_await version_paths_without_sha256(c, vid);
            for (const auto& path : unhashed) {
                auto segs = co_await version_file_segments(c, vid, path);
                auto key = segments_key(segs);
                auto it = known.find(key);
                if (it == known.end()) {
                    if (!last_round) {
                        raced = true;
                        co_return make_error(errc::conflict, "The prefix changed while it was hashed");
                    }
                    auto digest = co_await hash_segments(objects_, std::move(segs));
                    if (!digest)
                        co_return std::move(digest).error();
                    it = known.emplace(std::move(key), std::move(*digest)).first;
                }
                const pg::bytes raw(it->second);
                co_await set_version_file_sha256(c, vid, path, raw);
            }
            co_await advance_next_version(c, m.id);
            co_await record(c, m.id, vid, "created", who, spec.description, std::nullopt, "draft");
            co_await emit_version_event(c, m, "version.created", vid, static_cast<int>(number), spec.label,
                                        "draft", who, spec.description);
            if (!m.policy.protects("latest"))
                co_await move_alias(c, m, "latest", vid, static_cast<int>(number), who);
            // The answer is read in the transaction: once it commits, nothing is left that could fail.
            co_return co_await read_version(c, vid);
        };
        auto created = co_await transact(pool_, work);
        if (!created && raced)
            continue;
        if (!created)
            co_return std::move(created).error();
        co_await multipart_.release(std::move(unreferenced));
        co_return std::move(*created);
    }
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
        // Aliases first: they are a maintainer's, labels a writer's. (A name is never both at once, since
        // neither may take the other's; the order is the rule should that ever change.)
        if (aliases)
            v = co_await version_by_alias(*conn, m.id, ref);
        if (!v)
            v = co_await version_by_label(*conn, m.id, ref);
    }
    if (!v)
        co_return make_error(errc::not_found, "No such version");
    co_return std::move(*v);
}

asio::awaitable<result<model_version>> model_registry::version_of_alias(const model& m, std::int64_t alias_id)
{
    auto conn = co_await pool_.acquire();
    auto v = co_await version_by_alias_id(*conn, m.id, alias_id);
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
