#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// The SQL of multipart uploads (schema: multipart_uploads, multipart_parts, multipart_part_segments, and
/// the object_parts of a completed version): the rows and the statements registry/service/multipart_service
/// runs, each inside the transaction (or on the connection) the service passes. Row locks are taken here
/// exactly where the service asks for them; the decisions (part lists, checksums, conditions) are the
/// service's.

#include "common/checksum.hpp"
#include "registry/pg/pg.hpp"
#include "registry/types.hpp"

#include <boost/asio/awaitable.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

// multipart_upload and part_info: registry/types.hpp.

/// The columns of a new multipart_uploads row, as stored (names and JSON already made by the service).
struct upload_insert
{
    std::string upload_id;
    std::int64_t bucket_id = 0;
    std::string key;
    std::string owner_id;
    object_headers headers;
    std::string metadata_json;
    std::string checksum_algorithm; ///< empty: none
    std::string checksum_type;      ///< empty: none
    std::string tags_json;
    std::string lock_mode; ///< empty: no retention
    std::int64_t lock_until_ms = 0;
    std::optional<bool> legal_hold;
    std::string sse;                          ///< empty: none
    std::optional<std::string> sse_key_check; ///< bytea, SSE-C only
    std::string acl;                          ///< stored form; empty: the default
};

/// Inserts the upload row and returns it as find_upload would.
asio::awaitable<multipart_upload> insert_upload(pg::connection& c, const upload_insert& u);

/// The active upload `upload_id` of this bucket and key; nullopt when there is none.
asio::awaitable<std::optional<multipart_upload>>
find_upload(pg::connection& c, std::int64_t bucket_id, std::string_view key, std::string_view upload_id);

/// Locks an upload row (FOR SHARE for parts, FOR UPDATE for Complete/Abort); nullopt when it is gone.
asio::awaitable<std::optional<std::int64_t>> lock_upload(pg::connection& c, std::int64_t row, bool exclusive);

/// Locks version `row` FOR SHARE if it can still be copied, by CopyObject's rule (copy_version_in): not a
/// delete marker, and current unless `pinned`. False when it cannot.
asio::awaitable<bool> lock_copy_source(pg::connection& c, std::int64_t row, bool pinned);

/// Deletes one part (its segments cascade); returns the blob rows its segments referenced.
asio::awaitable<std::vector<std::int64_t>> delete_part(pg::connection& c, std::int64_t upload_row,
                                                       int part_number);

/// The part row and its segments (ordinal = position in `segments`); returns the part's upload time.
struct part_row
{
    std::int64_t upload_row = 0;
    int part_number = 0;
    std::uint64_t size = 0;
    std::string etag;
    std::string checksum;  ///< base64 or empty
    std::string crc64nvme; ///< raw
};
asio::awaitable<time_point> insert_part(pg::connection& c, const part_row& part,
                                        const std::vector<segment>& segments);

/// Parts of an upload with a number above `marker`, by number, at most `limit`.
asio::awaitable<std::vector<part_info>> parts_after(pg::connection& c, std::int64_t upload_row, int marker,
                                                    int limit);

/// The live, non-delete-marker version a completion of `upload_id` made in this bucket and key (its id,
/// version id, ETag, size and checksum filled); nullopt when there is none.
asio::awaitable<std::optional<object_version>> version_of_upload(pg::connection& c, std::int64_t bucket_id,
                                                                 std::string_view key,
                                                                 std::string_view upload_id);

/// A stored part with its manifest, as a completion reads it.
struct stored_part
{
    std::uint64_t size = 0;
    std::string etag;
    std::string checksum;  ///< base64, upload's algorithm
    std::string crc64nvme; ///< raw
    std::vector<segment> segments;
};
/// Every part of an upload by number, with its segments in order.
asio::awaitable<std::map<int, stored_part>> stored_parts(pg::connection& c, std::int64_t upload_row);

/// Deletes the upload row (its parts and segments cascade).
asio::awaitable<void> delete_upload(pg::connection& c, std::int64_t upload_row);

/// Records on version `version_row` the upload that completed into it.
asio::awaitable<void> set_version_upload(pg::connection& c, std::int64_t version_row,
                                         std::string_view upload_id);

/// The parts table of a completed version (GetObject partNumber, GetObjectAttributes): part numbers, their
/// offsets and sizes in the object, and their checksums (empty: none), in order.
struct object_part_rows
{
    std::vector<std::int64_t> numbers;
    std::vector<std::int64_t> offsets;
    std::vector<std::int64_t> sizes;
    std::vector<std::string> checksums;
};
asio::awaitable<void> insert_object_parts(pg::connection& c, std::int64_t version_row,
                                          const object_part_rows& parts);

/// What an abort records of the upload row it deletes.
struct removed_upload
{
    std::int64_t bucket_id = 0;
    std::string key;
    std::string upload_id;
    std::vector<std::int64_t> blob_rows; ///< what its parts' segments referenced
};
/// Deletes upload row `row` (locked by the caller) with its parts.
asio::awaitable<removed_upload> delete_upload_returning(pg::connection& c, std::int64_t row);

/// One batch of ListMultipartUploads: uploads of the bucket after (key_bound, id_bound) — with
/// `skip_key_bound`, after every upload of key_bound — whose key is at least `prefix`, in (key, row) order.
struct uploads_seek
{
    std::int64_t bucket_id = 0;
    std::string key_bound;
    std::string id_bound;
    std::string prefix;
    bool skip_key_bound = false;
    std::int64_t limit = 0;
};
asio::awaitable<std::vector<multipart_upload>> uploads_after(pg::connection& c, const uploads_seek& seek);

/// The upload rows of a bucket.
asio::awaitable<std::vector<std::int64_t>> upload_rows_of(pg::connection& c, std::int64_t bucket_id);

/// At most 10000 upload rows initiated before `cutoff_ms` (epoch milliseconds), oldest first.
asio::awaitable<std::vector<std::int64_t>> upload_rows_initiated_before(pg::connection& c,
                                                                        std::int64_t cutoff_ms);

} // namespace depot::registry
