#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The SQL of audit retention (registry/service/audit_archive.hpp): the installation-wide lock of an
/// archive run and audit_archive() of schema/0008_audit.sql, both inside the run's transaction.

#include "registry/pg/pg.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>

namespace depot::registry {

/// pg_try_advisory_xact_lock(key): true when this transaction now holds it.
boost::asio::awaitable<bool> try_transaction_lock(pg::connection& c, std::int64_t key);

/// Deletes the audit rows through `last_row` (keeping the chain anchor); returns how many.
boost::asio::awaitable<std::int64_t> delete_archived_audit_rows(pg::connection& c, std::int64_t last_row);

} // namespace depot::registry
