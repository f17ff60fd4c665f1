// Listing current keys. A page is index range scans over object_versions_current in UTF-8 byte order
// (COLLATE "C"); the folding into common prefixes is s3::listing_page, and each common prefix is skipped
// with one seek past it, so a page costs O(page size) whatever the bucket size.
#include "registry/repo/object_listing.hpp"

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
    s3::listing_page fold(req.prefix, req.delimiter, req.max_keys);

    auto conn = co_await pool_.acquire();
    bool more = true;
    while (more) {
        const std::size_t batch = std::min<std::size_t>(req.max_keys - fold.count() + 1, 1000);
        const listing_batch scan{.bucket_id = req.bucket_id,
                                 .bound = bound,
                                 .inclusive = inclusive,
                                 .upper = upper,
                                 .limit = static_cast<std::int64_t>(batch),
                                 .as_of = req.as_of};
        auto rows = co_await list_keys_batch(*conn, scan);
        more = rows.size() == batch;
        bool reseek = false;
        for (auto& row : rows) {
            auto step = fold.offer(row.key);
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
            bound = row.key;
            if (step.what == s3::listing_page::action::content)
                page.contents.push_back(std::move(row));
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
