// Listing current keys. A page is index range scans over object_versions_current in UTF-8 byte order
// (COLLATE "C"); the folding into common prefixes is s3::listing_page, and each common prefix is skipped
// with one seek past it, so a page costs O(page size) whatever the bucket size.
#include "registry/repo/sql_util.hpp"
#include "registry/service/object_service.hpp"
#include "s3/listing.hpp"
#include "s3/names.hpp"

namespace depot::registry {

asio::awaitable<result<list_page>> object_service::list(list_request req)
{
    list_page page;
    auto start = s3::listing_start(req.prefix, req.delimiter, req.after);
    if (req.max_keys == 0 || start.exhausted)
        co_return page;
    std::string upper = req.prefix.empty() ? std::string() : s3::prefix_successor(req.prefix);
    std::string bound = std::move(start.key);
    bool inclusive = start.inclusive;
    if (!req.within.empty()) {
        // The scan stays inside `within`; the fold still works on the requested prefix.
        if (req.within > bound) {
            bound = req.within;
            inclusive = true;
        }
        const std::string within_upper = s3::prefix_successor(req.within);
        if (!within_upper.empty() && (upper.empty() || within_upper < upper))
            upper = within_upper;
    }
    // Current keys, or the keys as of a snapshot's sequence number (at most one version of a key matches).
    const std::string visible = req.as_of == 0 ? "o.superseded_seq IS NULL AND NOT o.is_delete_marker AND "
                                               : "o.created_seq <= $5 AND (o.superseded_seq IS NULL OR "
                                                 "o.superseded_seq > $5) AND NOT o.is_delete_marker AND ";
    s3::listing_page fold(req.prefix, req.delimiter, req.max_keys);

    auto conn = co_await pool_.acquire();
    bool more = true;
    while (more) {
        const std::size_t batch = std::min<std::size_t>(req.max_keys - fold.count() + 1, 1000);
        const std::string query =
            std::string("SELECT o.key, o.size, o.etag, " DEPOT_MS(
                "o.last_modified") ", o.owner_id, u.display_name "
                                   "FROM object_versions o JOIN users u ON u.id = o.owner_id "
                                   "WHERE o.bucket_id = $1 AND ") +
            visible + (inclusive ? "o.key >= $2" : "o.key > $2") +
            " AND ($3 = '' OR o.key < $3) ORDER BY o.key LIMIT $4";
        pg::result_set rs;
        if (req.as_of == 0)
            rs = co_await sql(*conn, query, req.bucket_id, bound, upper, static_cast<std::int64_t>(batch));
        else
            rs = co_await sql(*conn, query, req.bucket_id, bound, upper, static_cast<std::int64_t>(batch),
                              req.as_of);
        more = static_cast<std::size_t>(rs.size()) == batch;
        bool reseek = false;
        for (auto r : rs) {
            auto step = fold.offer(r.text(0));
            if (step.what == s3::listing_page::action::stop) {
                more = false;
                break;
            }
            if (step.what == s3::listing_page::action::common_prefix) {
                if (step.seek.empty()) {
                    more = false;
                } else {
                    bound = std::move(step.seek);
                    inclusive = true;
                    reseek = true;
                }
                break;
            }
            if (step.what == s3::listing_page::action::content)
                page.contents.push_back(listing_entry{.key = r.str(0),
                                                      .size = static_cast<std::uint64_t>(r.i64(1)),
                                                      .etag = r.str(2),
                                                      .last_modified = from_millis(r.i64(3)),
                                                      .owner_id = r.str(4),
                                                      .owner_display_name = r.str(5)});
            bound = r.str(0);
            inclusive = false;
        }
        if (reseek)
            more = true;
    }
    page.common_prefixes = fold.common_prefixes();
    page.truncated = fold.truncated();
    page.last = fold.last();
    co_return page;
}

} // namespace depot::registry
