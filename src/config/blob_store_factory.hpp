#pragma once
/// \file
/// The blob store the options select (`--storage` and its settings), for depotd and depotctl alike.

#include "config/options.hpp"
#include "storage/blob_store.hpp"

#include <memory>

namespace depot::config {

/// Connects to RADOS when asked (blocking, bounded by the operation timeout); throws on failure with a
/// message naming what to fix.
std::shared_ptr<storage::blob_store> make_blob_store(const options& opts);

} // namespace depot::config
