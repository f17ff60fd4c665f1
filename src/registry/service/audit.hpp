#pragma once
/// \file
/// The audit service: what the HTTP layer and depotctl do with the audit log (schema/0008_audit.sql) —
/// read it, verify and seal its hash chain — and the rows a request writes itself, outside the transaction
/// of any change: denials of authenticated callers, model downloads, download links. Changes record their
/// own rows inside their transactions (the services do that); the SQL is registry/repo/audit.hpp and
/// registry/repo/request_audit.hpp, internal to the registry.

#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/types.hpp"
#include "registry/vocabulary.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace depot::registry::audit_log {

namespace asio = boost::asio;

/// Rows as JSON objects (id, at, actor, credential, team, action, resource, outcome, request_id,
/// client_addr, details, prev_hash, hash), at most `q.limit`, in chain order, as `q.viewer` may see them.
/// invalid_argument naming `since`/`until` when they are not timestamps.
asio::awaitable<result<std::vector<std::string>>> list(pg::pool& pool, const audit_query& q);

/// Checks the chain: every sealed row's hash against its content and its link to the one before. Never
/// writes.
asio::awaitable<audit_verification> verify(pg::pool& pool);

/// Links the rows whose transactions have ended into the chain; returns how many (0 also when another
/// process is sealing). depotd calls it every --audit-seal-interval, depotctl before verifying.
asio::awaitable<std::int64_t> seal(pg::pool& pool);

/// Whether this process appended a row since the last call (which clears it): the sealer's cue.
bool take_appended() noexcept;

/// The "denied" row `d` (registry/types.hpp) of a request of `who`: details {"reason"} and, when not empty,
/// "bucket" and "copy_source"; with no team, a refusal aimed at a key of a bucket under a model's prefix is
/// that model's team's row (details.model "team/model"). Throws pg::error.
asio::awaitable<void> record_denial(pg::pool& pool, const audit_context& who, const denial& d);

/// A model.download row in team `team` (the model view, the Hugging Face API: the caller resolved the
/// model). `details_json`: a JSON object. Throws pg::error.
asio::awaitable<void> record_model_download(pg::pool& pool, const audit_context& who,
                                            std::string_view resource, std::string_view team,
                                            std::string details_json);

/// A model.download row {"via": "bucket", "model": "team/model"} when `key` of bucket `bucket` is under some
/// model's prefix; nothing otherwise. Throws pg::error.
asio::awaitable<void> record_bucket_download(pg::pool& pool, const audit_context& who,
                                             std::string_view resource, std::string_view bucket,
                                             std::string_view key);

/// A model.download_link row (REST getFileDownloadLink: a presigned link was handed out) in team `team`.
/// `details_json`: a JSON object. Throws pg::error.
asio::awaitable<void> record_download_link(pg::pool& pool, const audit_context& who, std::string resource,
                                           std::string team, std::string details_json);

} // namespace depot::registry::audit_log
