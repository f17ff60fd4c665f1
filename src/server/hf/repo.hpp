#pragma once
/// \file
/// What the Hub API's handlers share (hf.hpp): the request's path parameters, opening a repo at a revision
/// with every access rule applied, the version's files, and the Hub's per-file identifiers.
///
/// Failures are `error`s whose code the router turns into the Hub's answer: no_such_bucket = 404
/// RepoNotFound, no_such_version = 404 RevisionNotFound, no_such_key = 404 EntryNotFound, access_denied =
/// 403 (a scope refusal), invalid_argument = 400.

#include "registry/service/model_registry.hpp"
#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <string>
#include <vector>

namespace depot::server::hf {

namespace asio = boost::asio;

/// The request's decoded path parameters, and what the handler learnt that an error response shows.
struct hub_request
{
    std::string team;
    std::string model;
    std::string revision; ///< "" when the route has none (model info without /revision/)
    std::string path;     ///< a file or directory in the repo; "" for none
    std::string commit;   ///< set once the revision resolved: a 404 EntryNotFound carries it
};

using handler = asio::awaitable<result<response>> (*)(request_context&, hub_request&);

/// A repo at a revision the caller may read.
struct repo_at
{
    registry::model model;
    registry::model_version version;
    std::string commit;
};

/// Opens `req.team/req.model` at `req.revision` (fills `req.commit`). Checks, in order: the credential's
/// scope reaches the model (access_denied), the team exists and the caller belongs to it or is an
/// installation admin, the model exists (no_such_bucket for all three), the revision resolves
/// (no_such_version), and an alias scope's alias points to that version (access_denied).
asio::awaitable<result<repo_at>> open_repo(request_context& ctx, hub_request& req);

/// All files of the version, by path (at most `limit`; invalid_argument beyond).
asio::awaitable<result<std::vector<registry::model_file>>>
all_files(request_context& ctx, const registry::model_version& v, std::size_t limit = 200000);

/// The file's entity tag as the Hub gives an LFS file's: its SHA-256 in hex (its S3 ETag when the digest is
/// not known), unquoted.
std::string file_etag(const registry::model_file& f);
/// A 40-hex Git-style object id for a file or directory entry (stable for the same content or path).
std::string object_id(std::string_view seed);

/// The size Git LFS pointer files have, which the Hub reports next to an LFS file's real size.
inline constexpr std::uint64_t lfs_pointer_size = 134;

// Handlers (model_info.cpp, tree.cpp, resolve.cpp).
asio::awaitable<result<response>> model_info(request_context&, hub_request&);
asio::awaitable<result<response>> list_tree(request_context&, hub_request&);
asio::awaitable<result<response>> paths_info(request_context&, hub_request&);
asio::awaitable<result<response>> resolve_file(request_context&, hub_request&);
asio::awaitable<result<response>> resolve_file_head(request_context&, hub_request&);

} // namespace depot::server::hf
