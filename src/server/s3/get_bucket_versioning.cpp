// GetBucketVersioning — https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketVersioning.html
#include "s3/responses.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> get_bucket_versioning(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    auto status = bucket->versioning == "enabled"     ? s3::versioning_status::enabled
                  : bucket->versioning == "suspended" ? s3::versioning_status::suspended
                                                      : s3::versioning_status::unversioned;
    co_return xml_response(s3::versioning_configuration_xml(status));
}

} // namespace depot::server::s3op
