#pragma once
#include "auth/sigv4.hpp"
#include "registry/types.hpp"
#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <optional>

namespace depot::server {

namespace asio = boost::asio;

/// Verifies the request's SigV4 signature (header or presigned) and fills `ctx.who` and `ctx.payload`.
/// Returns nullopt for an anonymous request (no credentials at all), the parsed signature otherwise.
/// Errors: invalid_access_key_id, signature_does_not_match, request_time_too_skewed,
/// expired_presigned_request, authorization_header_malformed, ... Every error counts as a failed
/// authentication of the client's address (record_auth_failure).
asio::awaitable<result<std::optional<auth::parsed_auth>>> authenticate(request_context& ctx);

/// The bucket a virtual-hosted-style request names in its Host header (BUCKET.<--domain>), else "".
std::string_view virtual_host_bucket_of(const request_context& ctx);

/// Whether the client's address is cooling down after too many failed authentications
/// (--auth-failure-limit): how long it still has to wait, or nullopt. Checked before authenticating, so a
/// refused request costs no signature check and no database query.
std::optional<std::chrono::seconds> auth_cooldown(const request_context& ctx);

/// Counts a failed authentication (a bad signature, an unknown key or token, ...) against the client's
/// address.
void record_auth_failure(const request_context& ctx);

/// The caller record of each credential kind, built here only (every surface's authentication uses these):
/// an access key (SigV4, SigV2, POST Object, a console sign-in), an API token (REST, the Hub API, a console
/// sign-in) and a console session (which acts with the credential it was opened with).
caller caller_of(const registry::access_key& key);
caller caller_of(const registry::api_token& token);
caller caller_of(const registry::console_session& session);

/// An API token (`Authorization: Bearer <token>`, REST and the Hub API): fills ctx.who on success; a
/// token that does not authenticate counts as a failed authentication of the address (record_auth_failure).
/// The caller checks auth_cooldown first.
asio::awaitable<bool> authenticate_bearer(request_context& ctx, std::string_view token);

} // namespace depot::server
