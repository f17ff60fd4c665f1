#pragma once
/// \file
/// Enforces a credential's scope (registry/credential_scope.hpp) on S3 operations and REST calls, after
/// authentication and before the handler runs (and so before any body byte is read). A scope narrows what
/// the caller's roles allow; the handlers' own checks still apply. Scopes are read from the database with
/// the credential on every request, so narrowing or revoking a credential holds from the next request on.

#include "server/api/http_api.hpp"
#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <string_view>

namespace depot::server {

namespace asio = boost::asio;

/// `operation`: the AWS action name of the route. access_denied when the scope does not allow it.
asio::awaitable<result<void>> check_s3_scope(request_context& ctx, std::string_view operation);

/// `operation`: the REST route's operationId. access_denied when the scope does not allow it.
asio::awaitable<result<void>> check_api_scope(request_context& ctx, std::string_view operation,
                                              const api::path_params& params);

} // namespace depot::server
