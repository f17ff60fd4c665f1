#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The audit rows a request writes itself, outside the transaction of any change (which services record
/// with append_audit, registry/repo/audit.hpp): denials of authenticated callers and model downloads, each in
/// a transaction of its own. The HTTP layer decides when one is due; this is where the rows are written.

#include "registry/pg/pg.hpp"
#include "registry/repo/audit.hpp"

#include <boost/asio/awaitable.hpp>
#include <string_view>

namespace depot::registry {

namespace asio = boost::asio;

/// The "denied" row `d` of a request of `who`: details {"reason"} and, when not empty, "bucket",
/// "copy_source" and (found for `d.key` when `d.team` is empty) "model". Throws pg::error.
asio::awaitable<void> audit_denial(pg::pool& pool, const audit_context& who, const denial& d);

/// A model.download row in team `team` (the model view, the Hugging Face API: the caller resolved the
/// model). `details_json`: a JSON object. Throws pg::error.
asio::awaitable<void> audit_model_download(pg::pool& pool, const audit_context& who,
                                           std::string_view resource, std::string_view team,
                                           std::string details_json);

/// A model.download row {"via": "bucket", "model": "team/model"} when `key` of bucket `bucket` is under some
/// model's prefix (the model with the longest one); nothing otherwise. One statement. Throws pg::error.
asio::awaitable<void> audit_bucket_download(pg::pool& pool, const audit_context& who,
                                            std::string_view resource, std::string_view bucket,
                                            std::string_view key);

} // namespace depot::registry
