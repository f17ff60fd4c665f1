// PutBucketPolicy, GetBucketPolicy, DeleteBucketPolicy, GetBucketPolicyStatus —
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketPolicy.html (and the Get/Delete/PolicyStatus
// pages). The document's rules and its evaluation: auth/bucket_policy.hpp; who may manage it: the bucket's
// owner and installation admins alone (auth::is_policy_management), whatever a policy says.
#include "auth/bucket_policy.hpp"

#include "common/strings.hpp"
#include "server/authorization.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> put_bucket_policy(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    // The owner never loses the right to manage the policy here, so there is nothing to confirm: the header
    // is accepted when it is a boolean.
    if (auto confirm = ctx.get("x-amz-confirm-remove-self-bucket-access");
        confirm && !iequals_ascii(trim_ows(*confirm), "true") && !iequals_ascii(trim_ows(*confirm), "false"))
        co_return make_error(errc::invalid_argument,
                             "x-amz-confirm-remove-self-bucket-access must be true or false",
                             "x-amz-confirm-remove-self-bucket-access");
    // Read a little beyond S3's limit, so that a document above it gets S3's MalformedPolicy.
    auto body = co_await read_small_body(ctx, auth::max_bucket_policy_bytes * 2);
    if (!body)
        co_return std::move(body).error();
    auto policy = auth::parse_bucket_policy(*body, bucket->name);
    if (!policy)
        co_return std::move(policy).error();
    for (const auto& user : auth::named_users(*policy))
        if (auto u = co_await ctx.svc->credentials.get_user(user); !u)
            co_return make_error(errc::malformed_policy, "Invalid principal in policy");
    if (auth::is_public(*policy) && blocks_public_policy(ctx, *bucket))
        co_return make_error(errc::access_denied,
                             "Access Denied: public policies are blocked for bucket " + bucket->name +
                                 " (its BlockPublicPolicy, or the installation's --allow-public-access)");
    // A named value, not a temporary in a co_await's operand (GCC 12 destroys those twice).
    std::optional<std::string> stored = std::move(*body);
    auto set = co_await ctx.svc->buckets.set_policy(ctx.audit, bucket->name, std::move(stored));
    if (!set)
        co_return std::move(set).error();
    response res;
    res.status = http::status::no_content;
    co_return res;
}

asio::awaitable<result<response>> get_bucket_policy(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    if (bucket->policy.empty())
        co_return make_error(errc::no_such_bucket_policy, "The bucket policy does not exist");
    response res;
    res.headers.set(http::field::content_type, "application/json");
    res.body = bucket->policy;
    co_return res;
}

asio::awaitable<result<response>> delete_bucket_policy(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    if (!bucket->policy.empty()) {
        std::optional<std::string> none;
        auto set = co_await ctx.svc->buckets.set_policy(ctx.audit, bucket->name, std::move(none));
        if (!set)
            co_return std::move(set).error();
    }
    response res;
    res.status = http::status::no_content;
    co_return res;
}

asio::awaitable<result<response>> get_bucket_policy_status(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    if (!bucket->parsed_policy)
        co_return make_error(errc::no_such_bucket_policy, "The bucket policy does not exist");
    const bool is_public = auth::is_public(*bucket->parsed_policy);
    co_return xml_response(std::string(R"(<?xml version="1.0" encoding="UTF-8"?>)") +
                           R"(<PolicyStatus xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><IsPublic>)" +
                           (is_public ? "true" : "false") + "</IsPublic></PolicyStatus>");
}

} // namespace depot::server::s3op
