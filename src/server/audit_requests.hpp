#pragma once
/// \file
/// The audit rows a request writes itself, as opposed to the rows services write inside their transactions:
/// denials of authenticated callers and model downloads, each in a transaction of its own. Also installs the
/// request's audit context (registry/service/audit.hpp) for the services it calls.

#include "common/error.hpp"
#include "registry/vocabulary.hpp"
#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace depot::server {

namespace asio = boost::asio;

/// A refusal of the authorization step and what it was aimed at. Recorded for the request because its
/// answer may hide it: the REST and Hub APIs answer 404 for a team or bucket the caller cannot see (nothing
/// about it leaks), and the dispatcher still writes the refusal's audit row, with the team (so that the
/// team's admins read it) and the bucket.
struct refusal
{
    std::string team;
    std::string bucket;
    std::string key;         ///< the key of `bucket` refused (a copy's source key)
    std::string copy_source; ///< the "bucket/key" a copy was refused
};

/// Records a refusal for the request `ctx` (server/authorization.cpp, hf/repo.cpp); the last one counts.
void note_refusal(const request_context& ctx, refusal what);
/// The refusal recorded for `ctx`, if any, and forgets it. The dispatchers call it when a request starts
/// (so that nothing left by a request torn down mid-way is taken for this one) and when it ends.
std::optional<refusal> take_refusal(const request_context& ctx);

/// Who is asking: the authenticated caller, its credential, the request id and the client address.
registry::audit_context audit_context_of(const request_context& ctx);

/// Records that `action` on `resource` was refused to the (authenticated) caller: outcome "denied",
/// details {"reason": message}. Never throws: a failure to record is logged (the request is refused anyway).
asio::awaitable<void> audit_denial(const request_context& ctx, std::string_view action,
                                   std::string_view resource, std::string_view message);
/// The same for the row `d` (registry/types.hpp: aimed at a team, a bucket, a key of it, a copy's source).
asio::awaitable<void> audit_denial(const request_context& ctx, registry::denial d);

/// What a refused request's audit row names, as the surface that served it knows: the row's action
/// ("s3.GetObject", "api.getBucket", "hf.resolve"), the resource, and the team and bucket it addressed.
struct refused_request
{
    std::string action;
    std::string resource;
    std::string team;
    std::string bucket;
    std::string key;         ///< the key of `bucket` it was aimed at (what a snapshot view path reads)
    std::string copy_source; ///< the "bucket/key" a copy was refused (then `bucket` and `key` are its)
};

/// The one place where a request's refusal becomes an audit row, called by each surface once its handler
/// has answered `failure`: for an authenticated caller, an AccessDenied, or any failure after a refusal the
/// authorization step noted (take_refusal: a 404 that hides a team, a bucket or a model), is a row, aimed
/// at the noted team and bucket where the step named them, else at those the request addressed. Returns
/// whether it wrote one (the access log then records the request as `access_denied`).
asio::awaitable<bool> audit_refusal(const request_context& ctx, const std::optional<error>& failure,
                                    refused_request addressed);

/// After a successful GetObject: a model.download row when the object is a model file, read through the
/// model view (s3://<models bucket>/team/model/ref/path) or under a model's prefix in its bucket (also read
/// through the bucket's snapshot view, .snapshots/<name>/<key> with <key> under the prefix). Throws
/// pg::error when the row cannot be written (the download must not happen unrecorded). `bucket_has_models`:
/// false when the read found that no model lives in the bucket (no row, and no query to find that out).
asio::awaitable<void> audit_download(const request_context& ctx, std::optional<bool> bucket_has_models);

} // namespace depot::server
