#pragma once
/// \file
/// Credentials: users, their S3 access keys, API tokens, console sessions, and the database half of scoped
/// credentials (where a scope's model lives, what an alias points to). One service for the REST API, the
/// S3 and Hub authentication and depotctl, so that a key, user or token made by either goes through the
/// same validation and leaves the same audit row. Every change is one transaction with its audit row.
///
/// Secrets: access key secrets are sealed with the server key before they reach the database and unsealed
/// only when a request is verified; an API token (`dpt_<id>_<secret>`) and a session cookie
/// (`dps_<id>_<secret>`) are stored as the SHA-256 of their secret, shown once. The SQL is
/// registry/repo/{identity,token,session}_repository and registry/repo/credential_scope, internal to the
/// registry.

#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/types.hpp"
#include "registry/vocabulary.hpp"

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depot::registry {

namespace asio = boost::asio;

class identity_repository;
class token_repository;
class session_repository;
class lookup_cache;

class credential_service
{
public:
    /// `server_key`: 32 raw bytes that seal access key secrets. The pool (and `cache`, if any) must outlive
    /// the service. With a cache, find_active_key answers from it and revoke_key updates it.
    credential_service(pg::pool& pool, std::string server_key, lookup_cache* cache = nullptr);
    ~credential_service();
    credential_service(const credential_service&) = delete;
    credential_service& operator=(const credential_service&) = delete;

    // Users.
    /// already_exists if the id is taken; invalid_argument for an id the schema refuses or one of the ids
    /// depotd keeps for itself (event_link_user_prefix).
    asio::awaitable<result<user>> create_user(const audit_context& who, user u);
    /// The user whose key signs the presigned links in team `team`'s events (server/webhooks/manifest.hpp),
    /// "depot-events.<team>", created by the system; already_exists once it is.
    asio::awaitable<result<user>> create_event_link_user(std::string_view team);
    asio::awaitable<result<user>> get_user(std::string_view id);
    /// The user whose e-mail address is `email` (case-insensitively), as S3 resolves a grant by e-mail
    /// address. Errors: unresolvable_grant when no user has it, ambiguous_grant when more than one does.
    asio::awaitable<result<std::string>> user_with_email(std::string_view email);
    asio::awaitable<std::vector<user>> list_users();

    // S3 access keys.
    /// Creates a key for `user_id`. Generates the id (20 upper-case alphanumerics, AWS style) and secret
    /// (40 base64-ish chars) unless given. not_found for an unknown user, already_exists for a taken id.
    /// `scope`: a JSON object narrowing the key (empty = none; an alias scope is bound to the alias's id, see
    /// auth/scope.hpp); `expires_at`: when it stops working.
    asio::awaitable<result<access_key>> create_key(const audit_context& who, std::string_view user_id,
                                                   std::string access_key_id = {}, std::string secret = {},
                                                   std::string scope = {},
                                                   std::optional<time_point> expires_at = std::nullopt);
    /// The key `access_key_id` without its secret (active or not). not_found otherwise.
    asio::awaitable<result<access_key>> get_key(std::string_view access_key_id);
    /// An active (not revoked, not expired) key with its unsealed secret. not_found otherwise.
    asio::awaitable<result<access_key>> find_active_key(std::string_view access_key_id);
    /// Keys of a user without secrets.
    asio::awaitable<std::vector<access_key>> list_keys(std::string_view user_id);
    /// not_found if no such active key.
    asio::awaitable<result<void>> revoke_key(const audit_context& who, std::string_view access_key_id);

    // API tokens.
    /// The new token with its whole value (`token`, shown once). not_found for an unknown user. `scope`: a
    /// JSON object narrowing the token (empty = none).
    asio::awaitable<result<api_token>> create_token(const audit_context& who, std::string_view user_id,
                                                    std::string name,
                                                    std::optional<time_point> expires_at = std::nullopt,
                                                    std::string scope = {});
    /// The token `id` (active or not), for its owner checks. not_found otherwise.
    asio::awaitable<result<api_token>> get_token(std::string_view id);
    /// The active token `token` names, if its secret matches; not_found for anything else, a malformed
    /// token included. "hf_dpt_..." (the shape Hugging Face Hub clients insist on) is the same token.
    asio::awaitable<result<api_token>> authenticate_token(std::string_view token);
    asio::awaitable<std::vector<api_token>> list_tokens(std::string_view user_id);
    /// not_found unless an active token with this id exists.
    asio::awaitable<result<void>> revoke_token(const audit_context& who, std::string_view id);

    // Console sessions.
    /// Opens a session for the credential (exactly one of `access_key_id`, `token_id`) of `user_id`.
    asio::awaitable<result<console_session>> open_session(const audit_context& who, std::string_view user_id,
                                                          std::string_view access_key_id,
                                                          std::string_view token_id, time_point expires_at);
    /// The live session `cookie` names if its secret matches and its credential is still active. not_found
    /// otherwise (malformed values included).
    asio::awaitable<result<console_session>> authenticate_session(std::string_view cookie);
    /// Ends the session. not_found unless it is active.
    asio::awaitable<result<void>> end_session(const audit_context& who, std::string_view id);
    /// Deletes the sessions that ended before `before` (the cleanup loop); returns how many.
    asio::awaitable<std::int64_t> purge_ended_sessions(time_point before);

    // Scoped credentials.
    /// The model `team/model`, if it exists.
    asio::awaitable<std::optional<model_location>> locate_model(std::string_view team,
                                                                std::string_view model);
    /// Whether `path` (relative to the model's prefix) is a file of the version the alias with id `alias_id`
    /// of `model_id` points to now. The id, not the name: once the alias is deleted, a label or a new alias
    /// taking its name is not what the credential was made for.
    asio::awaitable<bool> alias_has_file(std::int64_t model_id, std::int64_t alias_id, std::string_view path);

private:
    /// The scope to store: an alias scope bound to the alias it names now (its `alias_id`). invalid_argument
    /// when the alias does not exist, or when the request named an alias_id that is not that alias's.
    asio::awaitable<result<std::string>> bind_scope(std::string scope);

    pg::pool& pool_;
    std::unique_ptr<identity_repository> identities_;
    std::unique_ptr<token_repository> tokens_;
    std::unique_ptr<session_repository> sessions_;
};

} // namespace depot::registry
