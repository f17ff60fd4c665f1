#pragma once
/// \file
/// A blob-store decorator that measures every call of the store it wraps, and of the writers and readers
/// that store makes, into the process's metrics registry:
///
///   depot_blob_operation_duration_seconds{store,operation}  latency histogram
///   depot_blob_operation_errors_total{store,operation}      calls that failed with unavailable or io_error,
///                                                            or threw ("not_found" and other expected
///                                                            outcomes are answers, not errors)
///   depot_blob_read_bytes_total{store} / depot_blob_written_bytes_total{store}
///
/// `operation` is a blob_op name (see faulty_blob_store.hpp) or "abort"; `store` is the inner store's
/// kind(). Results and exceptions pass through unchanged; kind() is the inner store's. Every time series is
/// registered when the decorator is made, so a call only does atomic increments.

#include "common/metrics.hpp"
#include "storage/blob_store.hpp"

#include <memory>

namespace depot::storage {

/// Wraps `inner` (which it keeps alive, as do the writers and readers it hands out). Thread-safe like the
/// inner store. `registry` must outlive the decorator (the default registry lives forever).
std::shared_ptr<blob_store>
make_instrumented_blob_store(std::shared_ptr<blob_store> inner,
                             metrics::registry& registry = metrics::default_registry());

} // namespace depot::storage
