// GetBucketTagging — https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketTagging.html
#include "s3/responses.hpp"
#include "server/s3/common.hpp"
#include "server/s3/operations.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> get_bucket_tagging(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    if (!bucket->tags)
        co_return make_error(errc::no_such_tag_set, "The TagSet does not exist");
    co_return xml_response(s3::tagging_xml(*bucket->tags));
}

} // namespace depot::server::s3op
