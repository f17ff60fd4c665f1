#pragma once
/// \file
/// GET /metrics: the Prometheus text exposition format (version 0.0.4), unauthenticated like /healthz unless
/// --metrics-token-file is set: then only `Authorization: Bearer <token>` reads it. The storage gauges tell
/// whether content someone uploads was already stored (deduplication is across owners), so an installation
/// whose S3 port others reach should set a token.
/// Renders the default metrics registry (requests, storage, database statements) followed by what is read
/// at scrape time:
///
///   depot_db_pool_connections{state="in_use"|"idle"}, depot_db_pool_waiters, depot_db_pool_max_connections
///   depot_stored_logical_bytes, depot_stored_physical_bytes, depot_dedup_ratio   (from PostgreSQL, at most
///       one query per DEPOT_METRICS_STORAGE_INTERVAL seconds, default 60; absent until the first succeeds)
///   process_resident_memory_bytes, process_virtual_memory_bytes, process_cpu_seconds_total,
///   process_open_fds, process_max_fds, process_start_time_seconds          (from /proc/self)
///   depot_build_info{version,storage}

#include "config/options.hpp"
#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace depot::server {

/// The token /metrics requires: DEPOT_METRICS_TOKEN, else the content of --metrics-token-file, without
/// surrounding whitespace; empty when neither is set. Throws std::runtime_error naming the setting unless it
/// is at least 16 printable ASCII characters without spaces.
std::string load_metrics_token(const config::options& opts);

/// Whether `authorization` (the header's value; nullopt: none) may read /metrics given the configured
/// `token` (empty: none needed): `Bearer <token>`, compared in constant time.
bool metrics_authorized(std::string_view token, std::optional<std::string_view> authorization) noexcept;

/// The /metrics response. Never throws: a failing database query leaves its series out (or stale).
boost::asio::awaitable<response> metrics_response(services& svc);

/// Appends the process_* series read from /proc/self (Linux); leaves out what cannot be read.
void append_process_metrics(std::string& out);

} // namespace depot::server
