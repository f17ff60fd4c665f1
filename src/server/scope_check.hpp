#pragma once
/// \file
/// Enforces a credential's scope (registry/credential_scope.hpp) on S3 operations and REST calls, after
/// authentication and before the handler runs (and so before any body byte is read). A scope narrows what
/// the caller's roles allow; the handlers' own checks still apply. Scopes are read from the database with
/// the credential on every request, so narrowing or revoking a credential holds from the next request on.

#include "registry/credential_scope.hpp"
#include "server/api/http_api.hpp"
#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string_view>

namespace depot::server {

namespace asio = boost::asio;

/// `operation`: the AWS action name of the route. access_denied when the scope does not allow it. For an
/// alias-scoped credential reading a path of its model's bucket, sets ctx.frozen_view_key: the read serves
/// that frozen file of the aliased version, never the live object.
asio::awaitable<result<void>> check_s3_scope(request_context& ctx, std::string_view operation);

/// The area (bucket and key prefix) the caller's credential confines data access to; nullopt when it
/// confines to no bucket. For what a handler reaches beyond its path parameters: ListBuckets, the sources
/// of objects created from a digest.
asio::awaitable<std::optional<registry::scope_area>> scope_area_of(request_context& ctx);

/// access_denied unless every key starting with `key_prefix` in `bucket` is inside the caller's scope
/// (always for an alias scope, which reads only frozen files). For buckets and keys a request names in its
/// body (a restore's source prefix and target).
asio::awaitable<result<void>> check_scope_reaches(request_context& ctx, std::string_view bucket,
                                                  std::string_view key_prefix);

/// `operation`: the REST route's operationId. access_denied when the scope does not allow it.
asio::awaitable<result<void>> check_api_scope(request_context& ctx, std::string_view operation,
                                              const api::path_params& params);

} // namespace depot::server
