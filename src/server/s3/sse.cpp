#include "server/s3/sse.hpp"

#include "common/hash.hpp"
#include "s3/sse.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {
namespace {

s3::header_lookup lookup(const request_context& ctx)
{
    return [&ctx](std::string_view name) { return ctx.get(name); };
}

result<void> check_transport(const request_context& ctx)
{
    if (ctx.svc->opts.tls_cert_file.empty() && !ctx.svc->opts.sse_c_allow_http)
        return make_error(
            errc::invalid_request,
            "Requests specifying Server Side Encryption with Customer provided keys must be made "
            "over a secure connection.");
    return ok();
}

/// The SSE-C key of a request (headers under `prefix`) for something written with `sse` and `key_check`.
result<std::string> customer_key_for(const request_context& ctx, std::string_view prefix,
                                     std::string_view sse, std::string_view key_check, bool required)
{
    if (prefix == "x-amz-")
        if (auto refused = no_write_encryption(ctx); !refused)
            return std::move(refused).error();
    auto headers = s3::parse_sse_headers(lookup(ctx), prefix);
    if (!headers)
        return std::move(headers).error();
    const bool customer = sse == "SSE-C";
    if (headers->customer_key.empty()) {
        if (customer && required)
            return make_error(errc::invalid_request,
                              "The object was stored using a form of Server Side Encryption. The correct "
                              "parameters must be provided to retrieve the object.");
        return std::string();
    }
    if (auto secure = check_transport(ctx); !secure)
        return std::move(secure).error();
    if (!customer)
        return make_error(errc::invalid_request,
                          "The encryption parameters are not applicable to this object.");
    if (!registry::key_matches(key_check, headers->customer_key))
        return make_error(errc::access_denied, "Access Denied");
    return std::move(headers->customer_key);
}

} // namespace

result<registry::sse_spec> write_encryption(const request_context& ctx, const registry::bucket& b)
{
    return write_encryption(ctx, b, lookup(ctx));
}

result<registry::sse_spec> write_encryption(const request_context& ctx, const registry::bucket& b,
                                            const s3::header_lookup& get)
{
    auto headers = s3::parse_sse_headers(get);
    if (!headers)
        return std::move(headers).error();
    registry::sse_spec out;
    if (!headers->customer_key.empty()) {
        if (auto secure = check_transport(ctx); !secure)
            return std::move(secure).error();
        out.mode = registry::sealing::customer;
        out.customer_key = std::move(headers->customer_key);
        return out;
    }
    if (headers->sse_s3 || b.encryption == "AES256") {
        if (!ctx.svc->objects.has_sse_master_key())
            return make_error(
                errc::not_implemented,
                "Server side encryption specified but this server has no SSE master key configured "
                "(--sse-master-key-file)");
        out.mode = registry::sealing::master;
    }
    return out;
}

result<void> no_write_encryption(const request_context& ctx)
{
    if (ctx.get("x-amz-server-side-encryption"))
        return make_error(errc::invalid_argument,
                          "x-amz-server-side-encryption header is not supported for this operation.",
                          "x-amz-server-side-encryption");
    return ok();
}

result<void> unlock_for_read(const request_context& ctx, registry::object_handle& h, std::string_view prefix)
{
    auto key = customer_key_for(ctx, prefix, h.version.sse, h.version.sse_key_check, true);
    if (!key)
        return std::move(key).error();
    h.customer_key = std::move(*key);
    return ok();
}

result<std::string> upload_customer_key(const request_context& ctx, const registry::multipart_upload& upload,
                                        bool required)
{
    return customer_key_for(ctx, "x-amz-", upload.sse, upload.sse_key_check, required);
}

void set_sse_headers(response& res, const registry::object_version& v, std::string_view customer_key)
{
    if (v.sse == "AES256")
        res.headers.set("x-amz-server-side-encryption", "AES256");
    else if (v.sse == "SSE-C") {
        res.headers.set("x-amz-server-side-encryption-customer-algorithm", "AES256");
        if (!customer_key.empty())
            res.headers.set("x-amz-server-side-encryption-customer-key-MD5", to_base64(md5(customer_key)));
    }
}

void set_sse_headers(response& res, const registry::sse_spec& sse)
{
    registry::object_version v;
    v.sse = registry::sse_name(sse.mode);
    set_sse_headers(res, v, sse.customer_key);
}

} // namespace depot::server::s3op
