#pragma once
/// \file
/// GET /metrics: the Prometheus text exposition format (version 0.0.4), unauthenticated like /healthz.
/// Renders the default metrics registry (requests, storage, database statements) followed by what is read
/// at scrape time:
///
///   depot_db_pool_connections{state="in_use"|"idle"}, depot_db_pool_waiters, depot_db_pool_max_connections
///   depot_stored_logical_bytes, depot_stored_physical_bytes, depot_dedup_ratio   (from PostgreSQL, at most
///       one query per DEPOT_METRICS_STORAGE_INTERVAL seconds, default 60; absent until the first succeeds)
///   process_resident_memory_bytes, process_virtual_memory_bytes, process_cpu_seconds_total,
///   process_open_fds, process_max_fds, process_start_time_seconds          (from /proc/self)
///   depot_build_info{version,storage}

#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>

namespace depot::server {

/// The /metrics response. Never throws: a failing database query leaves its series out (or stale).
boost::asio::awaitable<response> metrics_response(services& svc);

/// Appends the process_* series read from /proc/self (Linux); leaves out what cannot be read.
void append_process_metrics(std::string& out);

} // namespace depot::server
