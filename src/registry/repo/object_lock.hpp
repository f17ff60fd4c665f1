#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// Object Lock in the registry: what a version's retention and legal hold forbid, checked under the
/// version's row lock inside the transaction of the change, so that no concurrent PutObjectRetention or
/// PutObjectLegalHold slips between the check and the delete. schema/0024_object_lock.sql's trigger refuses
/// the same changes in the database, whatever path attempts them; the checks here come first and answer
/// S3's errors.

#include "common/result.hpp"
#include "registry/pg/pg.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>

namespace depot::registry {

namespace asio = boost::asio;

/// Whether version row `row` (locked FOR UPDATE by the caller, in its transaction) may be removed
/// (permanently deleted, or purged behind a snapshot): access_denied while it is under legal hold or its
/// retention has not passed (GOVERNANCE gives way to `bypass_governance`). Returns whether the bypass was
/// needed; when it was, the transaction is marked so that the database's guard lets the removal through.
asio::awaitable<result<bool>> check_removable(pg::connection& c, std::int64_t row, bool bypass_governance);

} // namespace depot::registry
