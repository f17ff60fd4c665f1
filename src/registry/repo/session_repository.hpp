#pragma once
#if !defined(DEPOT_REGISTRY_INTERNAL)
#error "registry/repo/ is internal to the registry: outside src/registry, call a service of registry/service/"
#endif
/// \file
/// Browser sessions of the web console (schema/0017_console_sessions.sql). A session reads
/// `dps_<id>_<secret>`: the id (16 lower-case alphanumerics) names it, the secret (32 alphanumerics) is in
/// the browser's HttpOnly cookie only, and the database keeps SHA-256(secret). A session acts as the access
/// key or API token it was opened with (same user, same scope) and ends with it.

#include "common/result.hpp"
#include "registry/pg/pg.hpp"
#include "registry/types.hpp"

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>

namespace depot::registry {

namespace asio = boost::asio;

class session_repository
{
public:
    explicit session_repository(pg::pool& pool) : pool_(pool) {}

    /// Opens a session for the credential (exactly one of `access_key_id`, `token_id`) of `user_id`.
    asio::awaitable<result<console_session>> create(const audit_context& who, std::string_view user_id,
                                                    std::string_view access_key_id, std::string_view token_id,
                                                    time_point expires_at);
    /// The live session `cookie` names if its secret matches and its credential is still active. not_found
    /// otherwise (malformed values included).
    asio::awaitable<result<console_session>> authenticate(std::string_view cookie);
    /// Ends the session. not_found unless it is active.
    asio::awaitable<result<void>> revoke(const audit_context& who, std::string_view id);
    /// Deletes the sessions that expired or were revoked before `before` (depotd's cleanup loop, every
    /// --cleanup-interval, with now: an ended session never works again, so nothing is lost; sign-in and
    /// sign-out stay in the audit log). Returns how many.
    asio::awaitable<std::int64_t> purge_ended(time_point before);

private:
    pg::pool& pool_;
};

/// The session id of a well-formed cookie value, else empty.
std::string_view session_id_of(std::string_view cookie) noexcept;

} // namespace depot::registry
