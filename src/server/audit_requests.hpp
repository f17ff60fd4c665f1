#pragma once
/// \file
/// The audit rows a request writes itself, as opposed to the rows services write inside their transactions:
/// denials of authenticated callers and model downloads, each in a transaction of its own. Also installs the
/// request's audit context (registry/service/audit.hpp) for the services it calls.

#include "registry/vocabulary.hpp"
#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string_view>

namespace depot::server {

namespace asio = boost::asio;

/// Who is asking: the authenticated caller, its credential, the request id and the client address.
registry::audit_context audit_context_of(const request_context& ctx);

/// Records that `action` on `resource` was refused to the (authenticated) caller: outcome "denied",
/// details {"reason": message}. Never throws: a failure to record is logged (the request is refused anyway).
asio::awaitable<void> audit_denial(const request_context& ctx, std::string_view action,
                                   std::string_view resource, std::string_view message);

/// After a successful GetObject: a model.download row when the object is a model file, read through the
/// model view (s3://<models bucket>/team/model/ref/path) or under a model's prefix in its bucket (also read
/// through the bucket's snapshot view, .snapshots/<name>/<key> with <key> under the prefix). Throws
/// pg::error when the row cannot be written (the download must not happen unrecorded). `bucket_has_models`:
/// false when the read found that no model lives in the bucket (no row, and no query to find that out).
asio::awaitable<void> audit_download(const request_context& ctx, std::optional<bool> bucket_has_models);

} // namespace depot::server
