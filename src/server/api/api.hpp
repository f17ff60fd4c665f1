#pragma once
/// \file
/// The REST API under /api/v1: JSON in and out, errors as application/problem+json (RFC 9457).
/// `openapi/openapi.yaml` describes every route; tests check that the two agree.
///
/// Authentication: `Authorization: Bearer dpt_...` (an API token) or the same SigV4 signatures S3 requests
/// use (header or presigned, signed for service "s3"). Every call is authenticated before its body is read.

#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::server::api {

namespace asio = boost::asio;

/// True for request targets the REST API serves (the path is /api/v1 or below it).
bool is_api_target(std::string_view target) noexcept;

/// The routes' operation ids (as in the OpenAPI document), in table order: metrics and the access log name
/// a REST call by its route.
std::vector<std::string_view> operation_ids();

/// Serves one REST request. Never throws: failures become problem responses, logged with the request id.
/// `route` is set to the index (into operation_ids) of the route that served it, if any matched.
/// `denial_audited`: set when the request was refused and its denial audit row written (the access log then
/// says access_denied, also for a refusal answered 404).
asio::awaitable<response> dispatch(request_context& ctx, std::optional<std::size_t>& route,
                                   bool& denial_audited);

/// "METHOD /api/v1/path/{param}" for every route served, in table order (for `depotd --print-api-routes`
/// and the test that compares them with the OpenAPI document).
std::vector<std::string> route_list();

} // namespace depot::server::api
