#include "server/errors.hpp"

#include "common/log.hpp"
#include "registry/pg/pg.hpp"
#include "s3/errors.hpp"
#include "s3/xml.hpp"

namespace depot::server {

response s3_error_response(const error& err, std::string_view resource, std::string_view request_id,
                           bool head, std::string_view bucket, std::string_view key)
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
    std::string extra;
    switch (err.code) {
    case errc::no_such_bucket:
    case errc::invalid_bucket_name:
    case errc::bucket_already_exists:
    case errc::bucket_already_owned_by_you:
    case errc::bucket_not_empty:
        if (!bucket.empty()) {
            extra = "<BucketName>";
            s3::append_xml_escaped(extra, bucket);
            extra += "</BucketName>";
        }
        break;
    case errc::no_such_key:
        if (!key.empty()) {
            extra = "<Key>";
            s3::append_xml_escaped(extra, key);
            extra += "</Key>";
        }
        break;
    default:
        break;
    }
    if (!extra.empty())
        res.body.insert(res.body.rfind("</Error>"), extra);
    return res;
}

error error_from_exception(const std::exception& e, std::string_view request_id)
{
    if (const auto* db = dynamic_cast<const pg::error*>(&e)) {
        log::error(
            "database failure",
            {{"request_id", std::string(request_id)}, {"error", db->what()}, {"sqlstate", db->sqlstate()}});
        // No SQLSTATE: the connection failed, not the statement.
        if (db->sqlstate().empty())
            return make_error(errc::unavailable, "The service is temporarily unavailable; please retry.");
    } else {
        log::error("request failed", {{"request_id", std::string(request_id)}, {"error", e.what()}});
    }
    return make_error(errc::internal, "We encountered an internal error. Please try again.");
}

} // namespace depot::server
