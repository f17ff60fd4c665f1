#include "registry/repo/session_repository.hpp"

#include "common/hash.hpp"
#include "registry/repo/audit.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/transaction.hpp"

namespace depot::registry {
namespace {

constexpr std::string_view session_prefix = "dps_";
constexpr std::size_t session_id_length = 16;
constexpr std::size_t session_secret_length = 32;
constexpr std::string_view lower = "abcdefghijklmnopqrstuvwxyz0123456789";
constexpr std::string_view mixed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

bool session_is_alnum(std::string_view s)
{
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            return false;
    return !s.empty();
}

// Session columns, then the credential's scope; `s` sessions, `u` users, `k` keys, `t` tokens.
constexpr const char* session_select =
    "SELECT s.id, s.user_id, u.display_name, u.is_admin, coalesce(s.access_key_id, 'token:' || s.token_id), "
    "coalesce(k.scope::text, t.scope::text, ''), s.csrf_token, " DEPOT_MS("s.created_at") ", " DEPOT_MS(
        "s.expires_at") ", s.secret_hash "
                        "FROM console_sessions s JOIN users u ON u.id = s.user_id "
                        "LEFT JOIN access_keys k ON k.access_key_id = s.access_key_id "
                        "LEFT JOIN api_tokens t ON t.id = s.token_id ";

console_session session_from(const pg::row& r)
{
    return console_session{.id = r.str(0),
                           .user_id = r.str(1),
                           .user_display_name = r.str(2),
                           .user_is_admin = r.boolean(3),
                           .credential = r.str(4),
                           .scope = r.str(5),
                           .csrf_token = r.str(6),
                           .created_at = from_millis(r.i64(7)),
                           .expires_at = from_millis(r.i64(8))};
}

} // namespace

std::string_view session_id_of(std::string_view cookie) noexcept
{
    if (!cookie.starts_with(session_prefix) ||
        cookie.size() != session_prefix.size() + session_id_length + 1 + session_secret_length ||
        cookie[session_prefix.size() + session_id_length] != '_')
        return {};
    auto id = cookie.substr(session_prefix.size(), session_id_length);
    if (!session_is_alnum(id) ||
        !session_is_alnum(cookie.substr(session_prefix.size() + session_id_length + 1)))
        return {};
    return id;
}

asio::awaitable<result<console_session>>
session_repository::create(const audit_context& who, std::string_view user_id, std::string_view access_key_id,
                           std::string_view token_id, time_point expires_at)
{
    const auto id = random_text(lower, session_id_length);
    const auto secret = random_text(mixed, session_secret_length);
    const auto csrf = random_text(mixed, 32);
    const pg::bytes hash(sha256(secret));
    std::optional<std::string> key_param, token_param;
    if (!access_key_id.empty())
        key_param = std::string(access_key_id);
    else
        token_param = std::string(token_id);
    co_return co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<console_session>> {
        co_await sql(
            c,
            "INSERT INTO console_sessions (id, user_id, secret_hash, csrf_token, access_key_id, "
            "token_id, expires_at) VALUES ($1, $2, $3, $4, $5, $6, to_timestamp($7::double precision "
            "/ 1000))",
            id, user_id, hash, csrf, key_param, token_param, to_millis(expires_at));
        auto rs = co_await sql(c, std::string(session_select) + "WHERE s.id = $1", id);
        co_await append_audit(c, who, "session.create", "session:" + id, "",
                              "{\"user\":" + audit_quote(user_id) + "}");
        auto s = session_from(rs[0]);
        s.cookie = std::string(session_prefix) + id + "_" + secret;
        co_return s;
    });
}

asio::awaitable<result<console_session>> session_repository::authenticate(std::string_view cookie)
{
    auto unknown = [] { return make_error(errc::not_found, "The session is unknown, ended or expired"); };
    const auto id = session_id_of(cookie);
    if (id.empty())
        co_return unknown();
    const auto secret = cookie.substr(session_prefix.size() + session_id_length + 1);
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn,
                           std::string(session_select) +
                               "WHERE s.id = $1 AND s.revoked_at IS NULL AND s.expires_at > now() AND ("
                               "(k.access_key_id IS NOT NULL AND k.revoked_at IS NULL AND (k.expires_at IS "
                               "NULL OR k.expires_at > "
                               "now())) OR (t.id IS NOT NULL AND t.revoked_at IS NULL AND (t.expires_at IS "
                               "NULL OR t.expires_at > "
                               "now())))",
                           id);
    if (rs.empty() || !constant_time_equal(rs[0].bytea(9), sha256(secret)))
        co_return unknown();
    co_return session_from(rs[0]);
}

asio::awaitable<result<void>> session_repository::revoke(const audit_context& who, std::string_view id)
{
    co_return co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
        auto rs =
            co_await sql(c,
                         "UPDATE console_sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS "
                         "NULL RETURNING user_id",
                         id);
        if (rs.empty())
            co_return make_error(errc::not_found, "No such active session");
        co_await append_audit(c, who, "session.revoke", "session:" + std::string(id), "",
                              "{\"user\":" + audit_quote(rs[0].text(0)) + "}");
        co_return ok();
    });
}

asio::awaitable<std::int64_t> session_repository::purge_ended(time_point before)
{
    auto conn = co_await pool_.acquire();
    auto rs =
        co_await sql(*conn,
                     "WITH gone AS (DELETE FROM console_sessions WHERE expires_at < to_timestamp($1::double "
                     "precision / 1000) OR revoked_at < to_timestamp($1::double precision / 1000) "
                     "RETURNING 1) SELECT count(*) FROM gone",
                     to_millis(before));
    co_return rs[0].i64(0);
}

} // namespace depot::registry
