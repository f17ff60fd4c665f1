#pragma once
/// \file
/// Conditional deletes (DeleteObject with If-Match, x-amz-if-match-size, x-amz-if-match-last-modified-time;
/// DeleteObjects' ETag, Size and LastModifiedTime): object_service::remove with conditions checked against
/// the version the delete acts on (the current one, or `version_id`) under its row lock, in the delete's own
/// transaction, so that a concurrent write cannot slip between the check and the delete.

#include "registry/service/object_service.hpp"

#include <optional>
#include <string>

namespace depot::registry {

struct delete_conditions
{
    std::optional<std::string> if_match; ///< an ETag list or "*"
    std::optional<std::uint64_t> if_match_size;
    std::optional<time_point> if_match_last_modified; ///< compared at second precision (HTTP dates)

    bool empty() const noexcept { return !if_match && !if_match_size && !if_match_last_modified; }
};

/// object_service::remove with `conditions` (empty: exactly remove). With any condition: no such object (or
/// a delete marker) -> no_such_key; one that does not hold -> precondition_failed; nothing changes then.
/// `pool` and `store` are the ones the object service uses.
asio::awaitable<result<delete_outcome>> remove_object(const audit_context& who, pg::pool& pool,
                                                      storage::blob_store& store, delete_request request,
                                                      delete_conditions conditions);

} // namespace depot::registry
