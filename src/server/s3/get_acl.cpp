// GetBucketAcl — https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketAcl.html
// GetObjectAcl — https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObjectAcl.html
// Depot does not use ACLs for access decisions; these answer what S3 answers for an owner-only resource
// (FULL_CONTROL for the owner), which tools such as s3cmd `info` ask for.
#include "s3/xml.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"
#include "server/services.hpp"

namespace depot::server::s3op {
namespace {

response owner_acl(std::string_view id, std::string_view display_name)
{
    s3::xml_writer xml;
    xml.open("AccessControlPolicy", s3::s3_xmlns);
    xml.open("Owner").element("ID", id).element("DisplayName", display_name).close();
    xml.open("AccessControlList").open("Grant");
    // The xsi:type attribute is part of S3's Grantee element; the writer has no attributes, so the grantee is
    // written with its canonical user fields, which every client reads.
    xml.open("Grantee")
        .element("ID", id)
        .element("DisplayName", display_name)
        .element("Type", "CanonicalUser")
        .close();
    xml.element("Permission", "FULL_CONTROL").close().close();
    return xml_response(std::move(xml).finish());
}

} // namespace

asio::awaitable<result<response>> get_bucket_acl(request_context& ctx)
{
    auto bucket = co_await authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    co_return owner_acl(bucket->owner_id, bucket->owner_display_name);
}

asio::awaitable<result<response>> get_object_acl(request_context& ctx)
{
    auto bucket = co_await authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto opened = co_await ctx.svc->objects.open_object(bucket->id, ctx.key);
    if (!opened)
        co_return std::move(opened).error();
    co_return owner_acl(opened->version.owner_id, opened->version.owner_display_name);
}

} // namespace depot::server::s3op
