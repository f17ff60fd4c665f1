#include "server/s3/listing_xml.hpp"

#include "s3/listing.hpp"

namespace depot::server::s3op {

result<listing_params> listing_params_of(const request_context& ctx)
{
    listing_params p;
    p.prefix = std::string(ctx.param("prefix").value_or(""));
    p.delimiter = std::string(ctx.param("delimiter").value_or(""));
    auto max_keys = s3::parse_max_keys(ctx.param("max-keys"));
    if (!max_keys)
        return std::move(max_keys).error();
    p.max_keys = *max_keys;
    if (auto enc = ctx.param("encoding-type")) {
        if (*enc != "url")
            return make_error(errc::invalid_argument, "Invalid Encoding Method specified in Request",
                              "encoding-type");
        p.url_encoding = true;
    }
    return p;
}

std::vector<s3::object_entry> entries_of(const registry::list_page& page)
{
    std::vector<s3::object_entry> out;
    out.reserve(page.contents.size());
    for (const auto& e : page.contents)
        out.push_back({.key = e.key,
                       .last_modified = e.last_modified,
                       .etag = e.etag,
                       .size = e.size,
                       .owner = {e.owner_id, e.owner_display_name}});
    return out;
}

} // namespace depot::server::s3op
