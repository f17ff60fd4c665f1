#pragma once
/// \file
/// The REST API under /api/v1: JSON in and out, errors as application/problem+json (RFC 9457).
/// `openapi/openapi.yaml` describes every route; tests check that the two agree.
///
/// Authentication: `Authorization: Bearer dpt_...` (an API token) or the same SigV4 signatures S3 requests
/// use (header or presigned, signed for service "s3"). Every call is authenticated before its body is read.

#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace depot::server::api {

namespace asio = boost::asio;

/// True for request targets the REST API serves (the path is /api/v1 or below it).
bool is_api_target(std::string_view target) noexcept;

/// Serves one REST request. Never throws: failures become problem responses, logged with the request id.
asio::awaitable<response> dispatch(request_context& ctx);

/// "METHOD /api/v1/path/{param}" for every route served, in table order (for `depotd --print-api-routes`
/// and the test that compares them with the OpenAPI document).
std::vector<std::string> route_list();

} // namespace depot::server::api
