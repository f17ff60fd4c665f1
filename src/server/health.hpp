#pragma once
/// \file
/// GET /readyz: whether this depotd can serve requests. Unauthenticated, like /healthz (which only says the
/// process is up). Ready means, checked within 2 seconds in all:
/// - database: a pooled PostgreSQL connection answers a query;
/// - migrations: the schema is at the version this binary needs;
/// - blob_store: the store answers a stat() (for a blob that does not exist: "not found" is an answer).
///
/// Answers 200 with {"status":"ready","checks":{...}} or 503 with "unready" and each failing check's short
/// reason ("unreachable", "timeout", "behind", "ahead"); details go to the log when readiness changes, never
/// into the unauthenticated response.
///
/// Being unauthenticated, the endpoint must not let a client multiply database work: one probe's result
/// answers every call for a second, and calls that arrive while a probe runs wait for that probe instead of
/// starting their own (depot_readiness_probes_total counts the probes).

#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <string_view>

namespace depot::server {

/// The operational endpoints' names: path-style /healthz, /readyz and /metrics are these endpoints (server/
/// dispatch.cpp), so no bucket takes one of the names (CreateBucket).
inline bool is_operational_endpoint(std::string_view name) noexcept
{
    return name == "healthz" || name == "readyz" || name == "metrics";
}

/// Registers depot_readiness_probes_total (at zero), so that it is exported before the first /readyz.
void register_readiness_metrics();

/// The /readyz response. Never throws.
boost::asio::awaitable<response> readiness_response(services& svc);

} // namespace depot::server
