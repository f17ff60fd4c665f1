#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The audit log (schema/0008_audit.sql): one hash-chained row per state change, written by
/// `append_audit` inside the transaction of the change it records, and one row per denial or model download
/// (in a transaction of its own).
///
/// Who did it (actor, credential, request id, client address) is the request's `audit_context`, made once
/// when the request is authenticated (server/context.hpp) and passed explicitly, as the first parameter, to
/// every service operation that changes state. Work no request caused (cleanup, lifecycle, webhook delivery)
/// passes `system_audit_context()` or a context of its own naming it.

#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/types.hpp"
#include "registry/vocabulary.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

// system_audit_context, the outcomes and audit_quote: registry/vocabulary.hpp.

/// Appends one row, done by `ctx`, in `c`'s current transaction (the caller's BEGIN ... COMMIT).
/// `details_json`: a JSON object. The row is written unsealed (no hashes) and linked into the chain by
/// `seal_audit` after the transaction commits, so appenders never queue on each other. Call it late in the
/// transaction: until the transaction ends it holds back the next seal (not other writers). Throws pg::error
/// like any statement.
asio::awaitable<std::int64_t> append_audit(pg::connection& c, const audit_context& ctx,
                                           std::string_view action, std::string_view resource,
                                           std::string_view team = {}, std::string details_json = "{}",
                                           std::string_view outcome = audit_allowed);

/// append_audit for an object: the resource is "<bucket name>/<key>". Deferred (pg::connection::defer):
/// the row goes out with the transaction's next statement or its COMMIT, in the same round trip, so call it
/// inside a transaction (transact, or BEGIN ... COMMIT); an error surfaces from that next command.
asio::awaitable<void> append_object_audit(pg::connection& c, const audit_context& ctx,
                                          std::string_view action, std::int64_t bucket_id,
                                          std::string_view key, std::string details_json = "{}");

// audit_query and audit_verification: registry/types.hpp.

/// Rows as JSON objects (id, at, actor, credential, team, action, resource, outcome, request_id,
/// client_addr, details, prev_hash, hash), at most `limit`. invalid_argument naming `since`/`until` when
/// they are not timestamps.
asio::awaitable<result<std::vector<std::string>>> list_audit(pg::pool& pool, const audit_query& q);

/// Recomputes every remaining sealed row's hash from its content and checks each row's link to the one before
/// (the first to the archive anchor) and the head's link to the last row; unsealed rows must all come after
/// the head. Reads in pages; never writes.
asio::awaitable<audit_verification> verify_audit(pg::pool& pool);

/// Links the rows whose transactions have ended into the chain (schema/0010_audit_seal.sql): waits at most
/// 200 ms for appenders in flight (0 sealed when it gives up), then seals in id order. Returns the rows
/// sealed; 0 also when another process is sealing. depotd calls it every --audit-seal-interval.
asio::awaitable<std::int64_t> seal_audit(pg::pool& pool);

/// Whether this process appended a row since the last call (which clears it): the sealer's cue.
bool take_audit_appended() noexcept;

/// The id of the last sealed row written before `before` (ISO 8601), if any. invalid_argument for a bad time.
asio::awaitable<result<std::optional<std::int64_t>>> last_audit_row_before(pg::pool& pool,
                                                                           std::string_view before);

} // namespace depot::registry
