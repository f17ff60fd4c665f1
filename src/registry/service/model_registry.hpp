#pragma once
/// \file
/// The model registry: teams and their members' roles, models bound to a bucket prefix, immutable numbered
/// versions, aliases, and the approval workflow. Schema: schema/0005_models.sql.
///
/// Creating a version freezes the files under the model's prefix: one transaction takes the bucket's write
/// lock exclusively (writers hold it shared while they publish; see lock_bucket_writes), copies the current
/// object rows' manifests into model_files / model_file_segments and takes one blob reference per segment. No
/// bytes move, and nothing done to the prefix later can change or remove a version's files. A version is
/// complete when it becomes visible: every file's SHA-256 is recorded by the transaction that creates it.
/// Files whose whole-object SHA-256 was not known (multipart uploads, those the version completes included)
/// are hashed from the blob store before the transaction and recorded on the object row too, so the digest
/// is computed once per object; a file that appears in between sends the version round again. A file
/// stored under a customer's key (SSE-C) cannot be hashed or served without that key: the version is
/// refused (conflict, naming it).
///
/// Approval: a version is submitted (draft or rejected -> pending); approvers whose team role is at least
/// the policy's approver role approve or reject with a comment; neither its author nor anyone who submitted
/// it may approve it (nor, under four_eyes_rule::all_contributors, anyone who wrote one of its files); the
/// version becomes approved once `required_approvals` distinct approvers approved since the
/// last submission. A protected alias (policy) can only point at an approved version; no alias can point at
/// an archived one. Every transition is a model_events row.

#include "auth/authorize.hpp"
#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/service/multipart_service.hpp"
#include "registry/service/object_service.hpp"
#include "registry/types.hpp"
#include "storage/blob_store.hpp"

#include <algorithm>
#include <boost/asio/awaitable.hpp>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

// Team roles are authorization's vocabulary (auth/authorize.hpp); the registry stores them.
using auth::team_role;
using auth::team_role_of;
using auth::to_string;

/// Who may not approve a version (four-eyes). `author_and_submitter`: neither the user who created it nor
/// anyone who submitted it. `all_contributors`: nor anyone who wrote one of its files either (the owners of
/// the object versions it froze, model_version::contributors).
enum class four_eyes_rule
{
    author_and_submitter,
    all_contributors,
};
std::string_view to_string(four_eyes_rule r);
std::optional<four_eyes_rule> four_eyes_rule_of(std::string_view s);

struct approval_policy
{
    int required_approvals = 1;
    team_role approver_role = team_role::maintainer;
    std::vector<std::string> protected_aliases;
    four_eyes_rule four_eyes = four_eyes_rule::author_and_submitter;

    /// The alias can only point at an approved version.
    bool protects(std::string_view alias) const
    {
        return std::find(protected_aliases.begin(), protected_aliases.end(), alias) !=
               protected_aliases.end();
    }
};

struct team
{
    std::int64_t id = 0;
    std::string name;
    time_point created_at;
    approval_policy default_policy;
};

struct team_member
{
    std::string user_id;
    std::string display_name;
    team_role role = team_role::reader;
    time_point added_at;
};

struct model
{
    std::int64_t id = 0;
    std::int64_t team_id = 0;
    std::string team;
    std::string name;
    std::int64_t bucket_id = 0;
    std::string bucket;
    std::string prefix;
    std::string description;
    approval_policy policy; ///< effective: overrides applied over the team's default
    std::int64_t revision = 0;
    std::string created_by;
    time_point created_at;
    time_point updated_at;
    int version_count = 0;
};

struct policy_override
{
    std::optional<int> required_approvals;
    std::optional<team_role> approver_role;
    std::optional<std::vector<std::string>> protected_aliases;
    std::optional<four_eyes_rule> four_eyes;
};

struct model_spec
{
    std::string name;
    std::int64_t bucket_id = 0;
    std::string prefix;
    std::string description;
    policy_override policy;
};

struct model_update
{
    std::optional<std::string> description;
    policy_override policy;
};

/// A multipart upload (one `multipart_service::find` returned) to complete at the model's prefix + `path`.
struct version_upload
{
    std::string path;
    multipart_upload upload;
    std::vector<completed_part_ref> parts;
};

struct version_spec
{
    std::optional<std::string> label;
    std::string description;
    std::string framework;
    std::string format;
    std::optional<int> parent;
    std::string run_url;
    std::string labels_json = "{}";  ///< a JSON object
    std::string metrics_json = "{}"; ///< a JSON object
    /// Freeze the prefix as it was at this commit sequence number (a snapshot's) instead of now.
    std::optional<std::int64_t> as_of_seq;
    /// Multipart uploads to complete into the prefix in the version's transaction, after the bucket is
    /// locked and before the files are frozen: they and the version commit together or not at all.
    std::vector<version_upload> uploads;
    /// Asked for every file the version freezes (its full key), in the version's transaction: false refuses
    /// the version (access denied). The model's binding lets its team read the prefix; this is where what
    /// the bucket's policy denies the caller stays denied. Unset: every file may be read.
    std::function<bool(std::string_view key)> may_read;
};

struct model_version
{
    std::int64_t id = 0;
    std::int64_t model_id = 0;
    int number = 0;
    std::optional<std::string> label;
    std::string state;
    std::string description;
    std::string framework;
    std::string format;
    std::optional<int> parent;
    std::string run_url;
    std::string labels_json;
    std::string metrics_json;
    std::int64_t file_count = 0;
    std::int64_t total_bytes = 0;
    std::string created_by;
    time_point created_at;
    std::vector<std::string> aliases;      ///< aliases pointing at it
    std::vector<std::string> approvals;    ///< users who approved it since its last submission
    std::string submitted_by;              ///< of the last submission
    std::vector<std::string> contributors; ///< who wrote its files (owners of the frozen object versions)
};

struct model_file
{
    std::string path;
    std::uint64_t size = 0;
    std::string sha256; ///< raw
    std::string etag;
    std::optional<std::string> content_type;
};

struct model_alias
{
    std::int64_t id = 0; ///< the alias's identity: a deleted alias's id names nothing ever again
    std::string name;
    int version = 0;
    std::string updated_by;
    time_point updated_at;
};

/// An alias's entity tag (quoted): it changes whenever the alias moves.
std::string alias_etag(const model_alias& a);

struct model_event
{
    std::int64_t id = 0;
    std::optional<int> version;
    std::string action;
    std::string actor;
    std::string comment;
    std::optional<std::string> from_state;
    std::optional<std::string> to_state;
    std::string details_json;
    time_point at;
};

struct file_diff
{
    std::vector<model_file> added;
    std::vector<model_file> removed;
    std::vector<std::pair<model_file, model_file>> changed; ///< (old, new)
};

/// Version transitions other than approval.
enum class transition
{
    submit,
    reject,
    deprecate,
    archive,
};

struct freeze_source;

class model_registry
{
public:
    /// All must outlive the registry. `cache` (optional) learns of buckets gaining a model.
    model_registry(pg::pool& pool, storage::blob_store& store, object_service& objects,
                   multipart_service& multipart, lookup_cache* cache = nullptr)
        : pool_(pool), store_(store), objects_(objects), multipart_(multipart), cache_(cache)
    {}

    // Teams. Errors: already_exists, not_found (team or user), invalid_argument.
    asio::awaitable<result<team>> create_team(const audit_context& who, std::string name,
                                              approval_policy defaults);
    /// Every team for an installation admin, else the teams the user belongs to; by name.
    asio::awaitable<std::vector<team>> teams_of(std::string_view user_id, bool is_admin);
    asio::awaitable<result<team>> get_team(std::string_view name);
    asio::awaitable<std::optional<team_role>> role_of(std::int64_t team_id, std::string_view user_id);
    asio::awaitable<std::vector<team_member>> members(std::int64_t team_id);
    /// not_found for an unknown user; invalid_argument for one of depotd's own event-link signers
    /// (event_link_user_prefix): a team that took another team's signer in would read with its links.
    asio::awaitable<result<team_member>> set_member(const audit_context& who, std::int64_t team_id,
                                                    std::string_view user_id, team_role role);
    /// Makes "depot-events.<team_name>" (credential_service::create_event_link_user) a reader of the
    /// team `team_id` named `team_name`: the one way a signer becomes a member, and only of its own team.
    asio::awaitable<result<team_member>> admit_event_link_user(std::int64_t team_id,
                                                               std::string_view team_name);
    /// not_found when the user is not a member; conflict when it would leave the team without an admin;
    /// invalid_argument for the team's event-link signer, which stays.
    asio::awaitable<result<void>> remove_member(const audit_context& who, std::int64_t team_id,
                                                std::string_view user_id);

    // Models.
    asio::awaitable<result<model>> create_model(const team& owner, model_spec spec, const audit_context& who);
    /// A page of the team's models by name, after `after`.
    asio::awaitable<std::vector<model>> models(std::int64_t team_id, std::string_view after,
                                               std::size_t limit);
    asio::awaitable<result<model>> get_model(std::int64_t team_id, std::string_view name);
    /// precondition_failed when `expected_revision` (If-Match) is set and differs.
    asio::awaitable<result<model>> update_model(const model& m, model_update update,
                                                std::optional<std::int64_t> expected_revision,
                                                const audit_context& who);

    // Versions.
    /// Freezes the files under the model's prefix as the next version, completing `spec.uploads` first in
    /// the same transaction, with every file's SHA-256. Errors (none of them after the commit: an error means
    /// nothing changed): conflict (label taken, or equal to an alias; a file under an SSE-C key, named),
    /// invalid_argument (unknown parent), an upload's completion error (field "uploads", naming its path),
    /// and store errors while hashing.
    asio::awaitable<result<model_version>> create_version(const model& m, version_spec spec,
                                                          const audit_context& who);
    /// Versions newest first, below `before` (0 = from the newest).
    asio::awaitable<std::vector<model_version>> versions(std::int64_t model_id, int before,
                                                         std::size_t limit);
    /// By number ("3"), alias (when `aliases` is set) or label ("v1.2.0"), in that order; not_found
    /// otherwise. An alias to an archived version does not resolve.
    asio::awaitable<result<model_version>> get_version(const model& m, std::string_view ref, bool aliases);
    /// The version's files by path, after `after` (from it when `inclusive`).
    asio::awaitable<std::vector<model_file>> files(std::int64_t version_id, std::string_view after,
                                                   std::size_t limit, bool inclusive = false);
    asio::awaitable<file_diff> diff(std::int64_t from_version, std::int64_t to_version);
    /// One approval. Errors: conflict (not pending, already approved by this user), access_denied (the
    /// version's author, a submitter of it, or under all_contributors a writer of one of its files).
    /// `actor_role` has been checked against the policy by the caller.
    asio::awaitable<result<model_version>> approve(const model& m, const model_version& v,
                                                   const audit_context& who, std::string comment);
    asio::awaitable<result<model_version>> transition_version(const model& m, const model_version& v,
                                                              transition t, const audit_context& who,
                                                              std::string comment);
    asio::awaitable<std::vector<model_event>> history(std::int64_t model_id,
                                                      std::optional<std::int64_t> version_id,
                                                      std::int64_t after, std::size_t limit);

    // Aliases.
    asio::awaitable<std::vector<model_alias>> aliases(std::int64_t model_id);
    /// conflict: the alias is protected and the version not approved, the version is archived, or the name
    /// is a version label.
    /// `if_match`: the alias's ETag as the caller last read it (alias_etag), or "*" for "must exist";
    /// precondition_failed when it moved (or does not exist) since.
    asio::awaitable<result<model_alias>> set_alias(const model& m, std::string_view name,
                                                   const model_version& v, const audit_context& who,
                                                   std::optional<std::string> if_match = std::nullopt);
    asio::awaitable<result<void>> delete_alias(const model& m, std::string_view name,
                                               const audit_context& who,
                                               std::optional<std::string> if_match = std::nullopt);

    /// A version's file ready to read (segments hold blob references of the version). not_found.
    asio::awaitable<result<object_handle>> open_file(const model_version& v, std::string_view path);

    /// A version of `m` by its alias's identity (model_alias::id), whatever the alias is named and whatever
    /// else (a label) has that name now; not_found when the alias no longer exists or its version is
    /// archived.
    asio::awaitable<result<model_version>> version_of_alias(const model& m, std::int64_t alias_id);

private:
    /// set_member without the check of who may join.
    asio::awaitable<result<team_member>> put_member(const audit_context& who, std::int64_t team_id,
                                                    std::string_view user_id, team_role role);
    /// Digests (raw SHA-256) by segment list (model_versions.cpp segments_key).
    using known_digests = std::map<std::string, std::string>;
    /// Hashes the files `source` would freeze whose digest is not recorded (recording it on their object
    /// rows) and the objects `uploads` would complete into, adding them to `known`.
    asio::awaitable<result<void>> hash_unknown_digests(const freeze_source& source,
                                                       const std::vector<version_upload>& uploads,
                                                       known_digests& known);

    pg::pool& pool_;
    storage::blob_store& store_;
    object_service& objects_;
    multipart_service& multipart_;
    lookup_cache* cache_;
};

} // namespace depot::registry
