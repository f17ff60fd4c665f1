#include "server/api/paging.hpp"

#include "s3/listing.hpp"

namespace depot::server::api {
namespace {

constexpr std::size_t max_page = 1000;

} // namespace

result<page_request> page_of(const request_context& ctx)
{
    page_request p;
    if (auto v = ctx.param("limit")) {
        std::size_t n = 0;
        for (char c : *v) {
            if (c < '0' || c > '9' || n > max_page)
                return make_error(errc::invalid_argument, "limit must be an integer from 1 to 1000", "limit");
            n = n * 10 + static_cast<std::size_t>(c - '0');
        }
        if (n < 1 || n > max_page)
            return make_error(errc::invalid_argument, "limit must be an integer from 1 to 1000", "limit");
        p.limit = n;
    }
    if (auto v = ctx.param("cursor")) {
        auto decoded = s3::decode_continuation_token(*v);
        if (!decoded)
            return make_error(errc::invalid_argument, "cursor is not one this API returned", "cursor");
        p.cursor = std::move(*decoded);
    }
    return p;
}

response list_response(json::array items, const std::optional<std::string>& next)
{
    json::object o{{"items", std::move(items)}};
    o["next_cursor"] =
        next ? json::value(json::string(s3::encode_continuation_token(*next))) : json::value(nullptr);
    return json_response(o);
}

result<std::int64_t> numeric_cursor(const page_request& p)
{
    std::int64_t n = 0;
    for (char c : p.cursor) {
        if (c < '0' || c > '9' || n > INT32_MAX)
            return make_error(errc::invalid_argument, "cursor is not one this API returned", "cursor");
        n = n * 10 + (c - '0');
    }
    return n;
}

} // namespace depot::server::api
