#pragma once
/// \file
/// Cursor pagination of the REST lists: `?limit=` and `?cursor=` in, `{"items": [...], "next_cursor": ...}`
/// out. A cursor is opaque to clients (the encoded position the next page starts after).

#include "server/api/http_api.hpp"

#include <optional>
#include <string>

namespace depot::server::api {

struct page_request
{
    std::size_t limit = 100;
    std::string cursor; ///< the last position of the previous page; "" for the first page
};

/// ?limit= (1..1000, default 100) and ?cursor= as a previous page's next_cursor produced it;
/// invalid_argument naming the parameter otherwise.
result<page_request> page_of(const request_context& ctx);

/// {"items": [...], "next_cursor": ...}; `next` is the position the next page starts after (null when
/// this is the last page).
response list_response(json::array items, const std::optional<std::string>& next = std::nullopt);

} // namespace depot::server::api
