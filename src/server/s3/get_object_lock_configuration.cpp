// GetObjectLockConfiguration —
// https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObjectLockConfiguration.html
#include "server/s3/common.hpp"
#include "server/s3/object_lock.hpp"
#include "server/s3/operations.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> get_object_lock_configuration(request_context& ctx)
{
    auto bucket = authorized_bucket(ctx);
    if (!bucket)
        co_return std::move(bucket).error();
    if (!bucket->object_lock)
        co_return make_error(errc::object_lock_configuration_not_found,
                             "Object Lock configuration does not exist for this bucket");
    co_return xml_response(s3::object_lock_configuration_xml(bucket->lock_default));
}

} // namespace depot::server::s3op
