#include "server/errors.hpp"

#include "s3/errors.hpp"

namespace depot::server {

response s3_error_response(const error& err, std::string_view resource, std::string_view request_id,
                           bool head)
{
    auto info = s3::describe(err);
    response res;
    res.status = static_cast<http::status>(info.status);
    if (head) {
        res.headers.set("x-amz-error-code", info.code);
        res.head_only = true;
        res.headers.set(http::field::content_length, "0");
        return res;
    }
    res.headers.set(http::field::content_type, "application/xml");
    res.body = s3::error_xml(info, resource, request_id);
    return res;
}

} // namespace depot::server
