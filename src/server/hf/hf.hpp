#pragma once
/// \file
/// The Hugging Face Hub-compatible read API, on the S3 listener: what `huggingface_hub` (Python),
/// `@huggingface/hub` (JavaScript), `transformers`, vLLM, TGI and SGLang request when HF_ENDPOINT points at
/// Depot. A repo id `team/model` is Depot's model; a revision is a version number, a label, an alias, or a
/// version's commit id (registry/service/models.hpp). `main` and `HEAD` (what clients ask for when no
/// revision is given) are the alias or label `main` when there is one, else the alias `latest`; for a token
/// scoped to an alias, that alias.
///
///   GET  /api/models/{team}/{model}[/revision/{revision}]       model info: sha, siblings (rfilename, size)
///   GET  /api/models/{team}/{model}/tree/{revision}[/{path}]    files and directories (?recursive=true)
///   POST /api/models/{team}/{model}/paths-info/{revision}       the entries of the paths given
///   HEAD|GET /{team}/{model}/resolve/{revision}/{path}          a file, with the Hub's headers
///
/// Every file is presented as a Git LFS file is: its ETag and X-Linked-Etag are its SHA-256, X-Linked-Size
/// its size; X-Repo-Commit the version's commit id. Files are served directly (no redirect), with ranges,
/// through the read cache, and every GET of a file is a model.download audit row.
///
/// Authentication: `Authorization: Bearer <API token>`, the token written `dpt_...` or `hf_dpt_...`. A
/// token's scope holds: a model scope reaches that model only, an alias scope the version the alias points to
/// only (any revision naming that version), a bucket scope no model. Callers see the teams they belong to
/// (every team for an installation admin). Errors are shaped as the Hub shapes them, with X-Error-Code and
/// X-Error-Message: 401 without valid credentials, 404 RepoNotFound for a model that does not exist or that
/// the caller cannot see, 404 RevisionNotFound, 404 EntryNotFound (with X-Repo-Commit), 403 for a request
/// outside the token's scope.

#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string_view>
#include <vector>

namespace depot::server::hf {

namespace asio = boost::asio;

// Which requests are this API's is decided with S3's and REST's in server/pipeline.hpp (choose_surface): a
// Hub-shaped path with a bearer token or no credentials, never one with S3 credentials or a virtual host.

/// The routes' names, in table order, for metrics, the access log and the audit (`hf.<name>` denials).
std::vector<std::string_view> operation_names();

/// Serves one request of this API. Never throws: failures become Hub-shaped error responses. `route` is set
/// to the index (into operation_names) of the route that served it, if one matched.
/// `denial_audited`: set when the request was refused and its denial audit row written (the access log then
/// says access_denied, also for a refusal answered 404).
asio::awaitable<response> dispatch(request_context& ctx, std::optional<std::size_t>& route,
                                   bool& denial_audited);

} // namespace depot::server::hf
