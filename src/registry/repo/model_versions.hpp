#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The SQL of model versions (schema: model_versions, model_files, model_file_segments, and the
/// object_versions rows a version freezes): what registry/service/model_versions.cpp runs, each statement
/// inside the transaction (or on the connection) the service passes. Row locks are taken here exactly where
/// the service asks for them; the order of the steps, the bucket's write lock and the events are the
/// service's.

#include "registry/pg/pg.hpp"
#include "registry/service/model_registry.hpp"
#include "registry/types.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

struct freeze_source;

// --- digests of files not hashed yet --------------------------------------------------------------------

/// The object rows freeze_prefix would copy from `source` now (current, or visible at its as_of_seq) whose
/// whole-object SHA-256 is not known, by key.
asio::awaitable<std::vector<std::int64_t>> rows_without_sha256(pg::connection& c,
                                                               const freeze_source& source);

/// The segments of object row `version_row`, in order.
asio::awaitable<std::vector<segment>> object_row_segments(pg::connection& c, std::int64_t version_row);

/// Records the SHA-256 (raw) of object row `id` unless it has one already.
asio::awaitable<void> set_object_sha256(pg::connection& c, std::int64_t id, const pg::bytes& sha256);

/// The paths of version `version_id`'s files whose SHA-256 is not known.
asio::awaitable<std::vector<std::string>> version_paths_without_sha256(pg::connection& c,
                                                                       std::int64_t version_id);

/// The segments of file `path` of version `version_id`, in order.
asio::awaitable<std::vector<segment>> version_file_segments(pg::connection& c, std::int64_t version_id,
                                                            std::string_view path);

/// Records the SHA-256 (raw) of file `path` of version `version_id`.
asio::awaitable<void> set_version_file_sha256(pg::connection& c, std::int64_t version_id,
                                              std::string_view path, const pg::bytes& sha256);

/// A file of version `version_id` whose path a client could not write under a directory as it is, if it has
/// one: a segment (between '/' or '\\') that is empty or only dots and spaces ('.', '..', '.. '), ends in a
/// dot or a space, or is a Windows device name ('CON', 'aux.txt'); a drive letter ('C:'); a control
/// character.
asio::awaitable<std::optional<std::string>> unsafe_file_path(pg::connection& c, std::int64_t version_id);

/// The owner of model `model_id`'s bucket when the model's binding no longer stands: whoever bound it (the
/// model's creator) is neither an installation admin nor the bucket's owner still a member of the model's
/// team. nullopt while it stands (or when the model or bucket is gone: the caller finds that out).
asio::awaitable<std::optional<std::string>> orphaned_binding_owner(pg::connection& c, std::int64_t model_id);

/// A file of version `version_id` stored under a customer's key (SSE-C), if it has one: its path.
asio::awaitable<std::optional<std::string>> customer_sealed_file(pg::connection& c, std::int64_t version_id);

// --- creating a version (inside its transaction) --------------------------------------------------------

/// Locks the model row FOR UPDATE and returns the number its next version gets; nullopt when it is gone.
asio::awaitable<std::optional<std::int64_t>> lock_next_version(pg::connection& c, std::int64_t model_id);

/// True when `label` already names a version or an alias of the model.
asio::awaitable<bool> label_taken(pg::connection& c, std::int64_t model_id, std::string_view label);

/// Inserts version `number` of the model (draft, no files yet) from the spec; returns its id.
asio::awaitable<std::int64_t> insert_version(pg::connection& c, std::int64_t model_id, std::int64_t number,
                                             const version_spec& spec, std::string_view created_by);

/// What freeze_prefix copies: the object rows of bucket `bucket_id` under `prefix` (upper: the prefix's
/// successor, "" when the prefix is empty) that are visible now, or at commit sequence number `as_of_seq`.
struct freeze_source
{
    std::int64_t bucket_id = 0;
    std::string prefix;
    std::string upper;
    std::optional<std::int64_t> as_of_seq;
};

/// Copies the visible files under the prefix (directory markers excepted) into version `version_id`: its
/// model_files and model_file_segments rows (paths relative to the prefix), one blob reference per segment,
/// the version's file count and total size, and its contributors (the owners of the rows copied).
asio::awaitable<void> freeze_prefix(pg::connection& c, std::int64_t version_id, const freeze_source& source);

/// Moves the model's next version number past the version just created.
asio::awaitable<void> advance_next_version(pg::connection& c, std::int64_t model_id);

// --- reading versions ------------------------------------------------------------------------------------

/// Version `id`, which exists (std::out_of_range when it does not).
asio::awaitable<model_version> read_version(pg::connection& c, std::int64_t id);

/// The model's versions numbered below `before` (0 = from the newest), newest first, at most `limit`.
asio::awaitable<std::vector<model_version>> versions_before(pg::connection& c, std::int64_t model_id,
                                                            int before, std::int64_t limit);

/// The model's version numbered `number`, if any.
asio::awaitable<std::optional<model_version>> version_by_number(pg::connection& c, std::int64_t model_id,
                                                                std::int64_t number);

/// The model's version labelled `label`, if any.
asio::awaitable<std::optional<model_version>> version_by_label(pg::connection& c, std::int64_t model_id,
                                                               std::string_view label);

/// The version the model's alias `alias` points at, unless it is archived.
asio::awaitable<std::optional<model_version>> version_by_alias(pg::connection& c, std::int64_t model_id,
                                                               std::string_view alias);

/// The version the alias with id `alias_id` (of model `model_id`) points at, unless it is archived; nullopt
/// when that alias no longer exists.
asio::awaitable<std::optional<model_version>> version_by_alias_id(pg::connection& c, std::int64_t model_id,
                                                                  std::int64_t alias_id);

/// The version's files by path, after `after` (from it when `inclusive`), at most `limit`.
asio::awaitable<std::vector<model_file>> version_files(pg::connection& c, std::int64_t version_id,
                                                       std::string_view after, std::int64_t limit,
                                                       bool inclusive);

/// The files added, removed and changed (SHA-256 or size) from one version to another, by path.
asio::awaitable<file_diff> version_diff(pg::connection& c, std::int64_t from_version,
                                        std::int64_t to_version);

/// File `path` of the version, if it has one.
asio::awaitable<std::optional<model_file>> version_file(pg::connection& c, std::int64_t version_id,
                                                        std::string_view path);

} // namespace depot::registry
