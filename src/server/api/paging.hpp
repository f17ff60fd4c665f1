#pragma once
/// \file
/// Cursor pagination of the REST lists: `?limit=` and `?cursor=` in, `{"items": [...], "next_cursor": ...}`
/// out. A cursor is opaque to clients (the encoded position the next page starts after).

#include "server/api/http_api.hpp"

#include <optional>
#include <string>
#include <vector>

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

/// A cursor that holds a number (a version number or an event id); 0 for the first page.
result<std::int64_t> numeric_cursor(const page_request& p);

/// A page of `rows` fetched with limit + 1: the extra row only tells that more follow.
template <class Row, class Render, class Position>
response page_response(std::vector<Row> rows, std::size_t limit, Render render, Position position)
{
    std::optional<std::string> next;
    if (rows.size() > limit) {
        rows.resize(limit);
        next = position(rows.back());
    }
    json::array items;
    for (const auto& r : rows)
        items.push_back(render(r));
    return list_response(std::move(items), next);
}

} // namespace depot::server::api
