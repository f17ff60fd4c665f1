#pragma once
/// \file
/// The workloads of depot-bench: a prepare phase (bucket, keys for get/head/delete/list/mixed), the measured
/// phase with one coroutine per client on a single-threaded io_context, and an optional cleanup.

#include "options.hpp"
#include "stats.hpp"

namespace depot::bench {

/// Runs the workload `o.kind` against `o.endpoint`. Progress goes to stderr unless `o.quiet`. Throws
/// std::runtime_error when the bucket cannot be created or preparing keys fails; errors of measured
/// operations are counted in the report instead.
run_report run_workload(const options& o);

} // namespace depot::bench
