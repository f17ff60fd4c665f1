#pragma once
#include "auth/sigv4.hpp"
#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>

namespace depot::server {

namespace asio = boost::asio;

/// Verifies the request's SigV4 signature (header or presigned) and fills `ctx.who` and `ctx.payload`.
/// Returns nullopt for an anonymous request (no credentials at all), the parsed signature otherwise.
/// Errors: invalid_access_key_id, signature_does_not_match, request_time_too_skewed,
/// expired_presigned_request, authorization_header_malformed, ...
asio::awaitable<result<std::optional<auth::parsed_auth>>> authenticate(request_context& ctx);

} // namespace depot::server
