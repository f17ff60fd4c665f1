// PutObjectTagging — https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObjectTagging.html
// Replaces the tag set of a version in place: no new version, content unchanged.
#include "s3/xml.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/s3/versioning.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> put_object_tagging(request_context& ctx)
{
    auto version_id = version_id_of(ctx);
    if (!version_id)
        co_return std::move(version_id).error();
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto body = co_await read_small_body(ctx, ctx.svc->opts.max_xml_body_bytes);
    if (!body)
        co_return std::move(body).error();
    auto tags = s3::parse_tagging(*body, s3::max_object_tags);
    if (!tags)
        co_return std::move(tags).error();
    co_return co_await set_object_tags(ctx, *bucket, *version_id, std::move(*tags), http::status::ok);
}

asio::awaitable<result<response>> set_object_tags(request_context& ctx, const registry::bucket& bucket,
                                                  const std::optional<std::string>& version_id,
                                                  std::vector<s3::tag> tags, http::status success)
{
    auto opened = co_await ctx.svc->objects.open_version(bucket.id, ctx.key, version_id);
    if (!opened)
        co_return std::move(opened).error();
    const auto& v = opened->version;
    if (v.is_delete_marker)
        co_return delete_marker_response(ctx, v, version_id.has_value());
    if (auto set = co_await ctx.svc->objects.set_tags(ctx.audit, v, std::move(tags)); !set) {
        if (!version_id && set.error().code == errc::no_such_version) // deleted meanwhile
            co_return make_error(errc::no_such_key, "The specified key does not exist.");
        co_return std::move(set).error();
    }
    response res;
    res.status = success;
    // S3 names the version it tagged, "null" included.
    res.headers.set("x-amz-version-id", v.version_id);
    co_return res;
}

} // namespace depot::server::s3op
