#pragma once
/// \file
/// POST Object (browser form uploads): `POST /{bucket}` with a multipart/form-data body whose fields carry
/// the key, the object's headers and a signed policy document, and whose last used field, `file`, is the
/// object. The request has no Authorization header: the dispatcher authenticates it with
/// authenticate_post_object (the form's fields up to the file, the policy's signature, SigV4 or SigV2),
/// which sets ctx.who and ctx.key; from there on it is authorized, audited and limited as a PutObject of
/// that key by that credential. post_object then checks the policy's conditions and streams the file part
/// into the object service.

#include "auth/sigv4.hpp"
#include "server/context.hpp"

#include <boost/asio/awaitable.hpp>
#include <optional>

namespace depot::server::s3op {

namespace asio = boost::asio;

/// Reads the form up to its file part and verifies the policy's signature. nullopt: the form carries no
/// credentials (anonymous). Errors: precondition_failed (not multipart/form-data), malformed_post_request,
/// post_fields_too_large, invalid_argument (a missing or malformed field), invalid_access_key_id,
/// signature_does_not_match (the last two count as failed authentications of the client's address).
asio::awaitable<result<std::optional<auth::parsed_auth>>> authenticate_post_object(request_context& ctx);

/// A field of the form read while authenticating (`name` lower-case); nullopt when absent. A POST upload is
/// made of its signed fields, never of its HTTP headers (which nothing signs), so they are also what its
/// bucket-policy conditions read (server/authorization.cpp).
std::optional<std::string_view> post_form_field(const post_form& form, std::string_view name);

/// The operation, once authenticated and authorized (see the file comment).
asio::awaitable<result<response>> post_object(request_context& ctx);

} // namespace depot::server::s3op
