#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// API tokens: bearer credentials for the REST API. A token reads `dpt_<id>_<secret>`; the id (12
/// lower-case alphanumerics) is public and names the token, the secret (32 alphanumerics) is shown once
/// and only its SHA-256 is stored, so the database never holds a usable token.

#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/types.hpp"

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

class token_repository
{
public:
    explicit token_repository(pg::pool& pool) : pool_(pool) {}

    /// not_found for an unknown user. `scope`: a JSON object narrowing the token (empty = none).
    asio::awaitable<result<api_token>> create(const audit_context& who, std::string_view user_id,
                                              std::string name,
                                              std::optional<time_point> expires_at = std::nullopt,
                                              std::string scope = {});
    /// The token `id` (active or not), for its owner checks. not_found otherwise.
    asio::awaitable<result<api_token>> get(std::string_view id);
    /// The active (not revoked, not expired) token `token` names, if its secret matches. not_found for
    /// anything else, including a malformed token (the caller answers 401 either way). "hf_dpt_..." (the
    /// token behind "hf_", the shape Hugging Face Hub clients insist on) is the same token.
    asio::awaitable<result<api_token>> authenticate(std::string_view token);
    asio::awaitable<std::vector<api_token>> list(std::string_view user_id);
    /// not_found unless an active token with this id exists.
    asio::awaitable<result<void>> revoke(const audit_context& who, std::string_view id);

private:
    pg::pool& pool_;
};

} // namespace depot::registry
