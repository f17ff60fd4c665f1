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
    // Written by hand: Grantee needs the xsi:type attribute, which clients such as s3cmd require.
    std::string owner = "<ID>";
    s3::append_xml_escaped(owner, id);
    owner += "</ID><DisplayName>";
    s3::append_xml_escaped(owner, display_name);
    owner += "</DisplayName>";
    std::string doc = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<AccessControlPolicy xmlns=\"";
    doc += s3::s3_xmlns;
    doc +=
        "\"><Owner>" + owner +
        "</Owner><AccessControlList><Grant>"
        "<Grantee xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:type=\"CanonicalUser\">" +
        owner +
        "</Grantee><Permission>FULL_CONTROL</Permission></Grant></AccessControlList></AccessControlPolicy>";
    return xml_response(std::move(doc));
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
