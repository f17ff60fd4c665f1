#pragma once
/// \file
/// The bucket lifecycle operations (their route rows are in server/dispatch.cpp). Declared apart from
/// operations.hpp, which every handler includes.

#include "server/s3/operations.hpp"

namespace depot::server::s3op {

asio::awaitable<result<response>> put_bucket_lifecycle(request_context& ctx);
asio::awaitable<result<response>> get_bucket_lifecycle(request_context& ctx);
asio::awaitable<result<response>> delete_bucket_lifecycle(request_context& ctx);

} // namespace depot::server::s3op
