#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The SQL of the blob collector and the consistency check (schema: blobs, blob_intents, object_segments,
/// multipart_part_segments, model_file_segments): what registry/service/blob_collector.cpp runs, each
/// statement on the connection (or inside the transaction) the service passes. The scans of the blob
/// store, the transactions and their isolation are the service's.

#include "registry/pg/pg.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

/// Deletes the intents whose lease ran out; returns how many there were.
asio::awaitable<std::size_t> delete_lapsed_intents(pg::connection& c);

/// Which of `ids` (a text[] literal of store ids) a blob row or an intent names, in one statement (one
/// snapshot); with `live_intents_only`, an intent whose lease ran out does not count.
asio::awaitable<std::vector<std::string>> known_store_ids(pg::connection& c, const std::string& ids,
                                                          bool live_intents_only);

/// A blob row as the consistency check compares it with the store.
struct blob_row_size
{
    std::string store_id;
    std::int64_t size = 0; ///< the plaintext size
    bool sealed = false;
};

/// Up to 1000 blob rows with a store id after `after`, in byte order (COLLATE "C").
asio::awaitable<std::vector<blob_row_size>> blob_rows_after(pg::connection& c, const std::string& after);

/// Which of `ids` (a text[] literal of store ids) an intent names.
asio::awaitable<std::vector<std::string>> intent_store_ids(pg::connection& c, const std::string& ids);

/// The blob rows whose refcount differs from the references they have: (id, refcount, actual), by id.
asio::awaitable<std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>>
refcount_mismatches(pg::connection& c);

/// Sets every blob row's refcount to the references it has; returns how many rows changed.
asio::awaitable<std::size_t> correct_refcounts(pg::connection& c);

/// Deletes the blob rows without references; returns their store ids.
asio::awaitable<std::vector<std::string>> delete_zero_refcount_blobs(pg::connection& c);

} // namespace depot::registry
