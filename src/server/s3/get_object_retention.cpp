// GetObjectRetention — https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObjectRetention.html
#include "server/s3/common.hpp"
#include "server/s3/object_lock.hpp"
#include "server/s3/operations.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> get_object_retention(request_context& ctx)
{
    auto target = co_await lock_target_of(ctx);
    if (!target)
        co_return std::move(target).error();
    if (!target->version.retention)
        co_return make_error(errc::no_such_object_lock_configuration,
                             "The specified object does not have a ObjectLock configuration");
    co_return xml_response(s3::retention_xml(*target->version.retention));
}

} // namespace depot::server::s3op
