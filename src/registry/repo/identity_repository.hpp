#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// Users and their S3 access keys. Secrets are sealed with the server key before they reach the database
/// and unsealed only when a request is verified.

#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/types.hpp"

#include <boost/asio/awaitable.hpp>
#include <string>
#include <vector>

namespace depot::registry {

class lookup_cache;

namespace asio = boost::asio;

class identity_repository
{
public:
    /// `server_key`: 32 raw bytes used to seal/unseal secrets. The pool (and `cache`, if any) must outlive
    /// the repository. With a cache, find_active_key answers from it and revoke_key updates it.
    identity_repository(pg::pool& pool, std::string server_key, lookup_cache* cache = nullptr)
        : pool_(pool), server_key_(std::move(server_key)), cache_(cache)
    {}

    /// already_exists if the id is taken; invalid_argument for an id the schema refuses.
    asio::awaitable<result<user>> create_user(const audit_context& who, user u);
    asio::awaitable<result<user>> get_user(std::string_view id);
    /// The ids of the users whose e-mail address is `email` (compared case-insensitively), at most `limit`.
    asio::awaitable<std::vector<std::string>> users_with_email(std::string_view email, int limit);
    asio::awaitable<std::vector<user>> list_users();

    /// Creates a key for `user_id`. Generates the id (20 upper-case alphanumerics, AWS style) and secret
    /// (40 base64-ish chars) unless given. not_found for an unknown user, already_exists for a taken id.
    /// `scope`: a JSON object narrowing the key (empty = none); `expires_at`: when it stops working.
    asio::awaitable<result<access_key>> create_key(const audit_context& who, std::string_view user_id,
                                                   std::string access_key_id = {}, std::string secret = {},
                                                   std::string scope = {},
                                                   std::optional<time_point> expires_at = std::nullopt);
    /// The key `access_key_id` without its secret (active or not). not_found otherwise.
    asio::awaitable<result<access_key>> get_key(std::string_view access_key_id);
    /// Finds an active (not revoked, not expired) key with its unsealed secret. not_found otherwise.
    asio::awaitable<result<access_key>> find_active_key(std::string_view access_key_id);
    /// Keys of a user without secrets.
    asio::awaitable<std::vector<access_key>> list_keys(std::string_view user_id);
    /// not_found if no such active key.
    asio::awaitable<result<void>> revoke_key(const audit_context& who, std::string_view access_key_id);

private:
    pg::pool& pool_;
    std::string server_key_;
    lookup_cache* cache_;
};

} // namespace depot::registry
