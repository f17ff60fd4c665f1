#include "server/s3/versioning.hpp"

#include "common/http_date.hpp"
#include "registry/vocabulary.hpp"
#include "server/errors.hpp"

namespace depot::server::s3op {

result<void> check_version_id(std::string_view id, std::string_view argument)
{
    if (!registry::is_valid_version_id(id))
        return make_error(errc::invalid_argument, "Invalid version id specified", std::string(argument));
    return ok();
}

result<std::optional<std::string>> version_id_of(const request_context& ctx)
{
    auto id = ctx.param("versionId");
    if (!id)
        return std::optional<std::string>();
    if (auto valid = check_version_id(*id); !valid)
        return std::move(valid).error();
    return std::optional<std::string>(std::string(*id));
}

void set_version_header(response& res, const registry::bucket& bucket, const registry::object_version& v)
{
    if (v.version_id != "null" || bucket.versioning != "unversioned")
        res.headers.set("x-amz-version-id", v.version_id);
}

response delete_marker_response(const request_context& ctx, const registry::object_version& marker,
                                bool named)
{
    std::string_view target = ctx.header->target();
    auto err = named ? make_error(errc::method_not_allowed,
                                  "The specified method is not allowed against this resource.")
                     : make_error(errc::no_such_key, "The specified key does not exist.");
    auto res = s3_error_response(err, target.substr(0, target.find('?')), ctx.request_id,
                                 ctx.header->method() == http::verb::head, ctx.bucket, ctx.key);
    res.headers.set("x-amz-delete-marker", "true");
    res.headers.set("x-amz-version-id", marker.version_id);
    if (named)
        res.headers.set(http::field::last_modified, format_http_date(marker.last_modified));
    return res;
}

} // namespace depot::server::s3op
