// CreateBucket — https://docs.aws.amazon.com/AmazonS3/latest/API/API_CreateBucket.html
#include "common/strings.hpp"
#include "s3/names.hpp"
#include "s3/xml.hpp"
#include "server/health.hpp"
#include "server/s3/access.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> create_bucket(request_context& ctx)
{
    if (auto valid = s3::validate_bucket_name(ctx.bucket); !valid)
        co_return std::move(valid).error();
    // Path-style /api/v1/... is the REST API, so no bucket may be named "api"; an unsigned GET of /healthz,
    // /readyz or /metrics is the operational endpoint, so no bucket is named like one either (its public
    // listing would answer only with a query string).
    if (ctx.bucket == "api")
        co_return make_error(errc::invalid_bucket_name,
                             "The bucket name \"api\" is reserved for Depot's REST API");
    if (is_operational_endpoint(ctx.bucket))
        co_return make_error(errc::invalid_bucket_name,
                             "The bucket name \"" + ctx.bucket +
                                 "\" is reserved for Depot's operational endpoint");
    if (ctx.bucket == ctx.svc->opts.models_bucket)
        co_return make_error(errc::invalid_bucket_name,
                             "The bucket name \"" + ctx.bucket +
                                 "\" is reserved for the read-only view of the model registry");
    auto access = co_await bucket_access_of_create(ctx);
    if (!access)
        co_return std::move(access).error();
    auto body = co_await read_small_body(ctx, ctx.svc->opts.max_xml_body_bytes);
    if (!body)
        co_return std::move(body).error();
    auto config = s3::parse_create_bucket_configuration(*body);
    if (!config)
        co_return std::move(config).error();
    const auto& region = ctx.svc->opts.region;
    const auto& wanted = config->location_constraint;
    // An empty constraint means "the endpoint's region" (S3 sends none for us-east-1; MinIO takes an empty
    // one as its own region). aws cli v2 with no region configured anywhere signs for us-east-1 but sends
    // `aws-global`, the pseudo-region of AWS's global endpoint (its endpoint rules map it to us-east-1):
    // it names no region of its own, so it is this server's region too, whatever that is.
    if (!wanted.empty() && wanted != "aws-global" && wanted != region)
        co_return make_error(errc::invalid_location_constraint,
                             "The specified location-constraint is not valid for this endpoint (region " +
                                 region + ")",
                             "LocationConstraint");
    // x-amz-bucket-object-lock-enabled: true creates the bucket with Object Lock (and versioning Enabled).
    bool object_lock = false;
    if (auto lock = ctx.get("x-amz-bucket-object-lock-enabled")) {
        if (iequals_ascii(trim_ows(*lock), "true"))
            object_lock = true;
        else if (!iequals_ascii(trim_ows(*lock), "false"))
            co_return make_error(errc::invalid_argument,
                                 "x-amz-bucket-object-lock-enabled must be true or false",
                                 "x-amz-bucket-object-lock-enabled");
    }
    auto created =
        co_await ctx.svc->buckets.create(ctx.audit, ctx.bucket, ctx.who.user_id, region, object_lock);
    if (!created)
        co_return std::move(created).error();
    if (auto applied = co_await apply_bucket_access(ctx, *created, *access); !applied)
        co_return std::move(applied).error();
    response res;
    res.headers.set(http::field::location, "/" + ctx.bucket);
    co_return res;
}

} // namespace depot::server::s3op
