#include "registry/repo/identity_repository.hpp"

#include "common/hash.hpp"
#include "common/secret_box.hpp"
#include "registry/repo/audit.hpp"
#include "registry/repo/sql_util.hpp"
#include "registry/service/lookup_cache.hpp"
#include "registry/transaction.hpp"

namespace depot::registry {
namespace {

user user_from(const pg::row& r)
{
    return user{.id = r.str(0),
                .display_name = r.str(1),
                .email = r.str(2),
                .is_admin = r.boolean(3),
                .created_at = from_millis(r.i64(4))};
}

constexpr const char* user_columns =
    "id, display_name, coalesce(email, ''), is_admin, " DEPOT_MS("created_at");

/// Random string over `alphabet` using rejection-free modulo on a 256-symbol draw (alphabet sizes here are
/// 32 and 64, which divide 256, so there is no bias).
std::string random_string(std::string_view alphabet, std::size_t n)
{
    auto raw = random_bytes(n);
    std::string out(n, '\0');
    for (std::size_t i = 0; i < n; ++i)
        out[i] = alphabet[static_cast<unsigned char>(raw[i]) % alphabet.size()];
    return out;
}

} // namespace

asio::awaitable<result<user>> identity_repository::create_user(const audit_context& who, user u)
{
    const std::string display_name = u.display_name.empty() ? u.id : u.display_name;
    const std::string details = std::string("{\"admin\":") + (u.is_admin ? "true" : "false") + "}";
    try {
        co_return co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<user>> {
            auto rs =
                co_await sql(c,
                             std::string("INSERT INTO users (id, display_name, email, is_admin) "
                                         "VALUES ($1, $2, nullif($3, ''), $4) ON CONFLICT (id) DO NOTHING "
                                         "RETURNING ") +
                                 user_columns,
                             u.id, display_name, u.email, u.is_admin);
            if (rs.empty())
                co_return make_error(errc::already_exists, "user '" + u.id + "' already exists");
            auto created = user_from(rs[0]);
            co_await append_audit(c, who, "user.create", u.id, "", details);
            co_return created;
        });
    } catch (const pg::error& e) {
        if (e.sqlstate() == "23514")
            co_return make_error(errc::invalid_argument,
                                 "user id must be 1-128 characters of letters, digits and ._@-");
        throw;
    }
}

asio::awaitable<result<user>> identity_repository::get_user(std::string_view id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn, std::string("SELECT ") + user_columns + " FROM users WHERE id = $1", id);
    if (rs.empty())
        co_return make_error(errc::not_found, "no such user");
    co_return user_from(rs[0]);
}

asio::awaitable<std::vector<std::string>> identity_repository::users_with_email(std::string_view email,
                                                                                int limit)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn, "SELECT id FROM users WHERE lower(email) = lower($1) ORDER BY id LIMIT $2",
                           email, static_cast<std::int64_t>(limit));
    co_return first_texts(rs);
}

asio::awaitable<std::vector<user>> identity_repository::list_users()
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(*conn, std::string("SELECT ") + user_columns + " FROM users ORDER BY id");
    std::vector<user> out;
    for (auto r : rs)
        out.push_back(user_from(r));
    co_return out;
}

asio::awaitable<result<access_key>>
identity_repository::create_key(const audit_context& who, std::string_view user_id, std::string access_key_id,
                                std::string secret, std::string scope, std::optional<time_point> expires_at)
{
    if (access_key_id.empty())
        access_key_id = "DK" + random_string("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 18);
    if (secret.empty())
        secret = random_string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 40);
    if (secret.size() < 8 || secret.size() > 128)
        co_return make_error(errc::invalid_argument, "secret must be 8-128 characters");
    // The key id is associated data: a sealed secret copied onto another key's row does not open.
    auto sealed = secret_box::seal(server_key_, secret, access_key_id);
    std::optional<std::int64_t> expires_ms;
    if (expires_at)
        expires_ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(expires_at->time_since_epoch()).count();
    std::optional<std::string> scope_param;
    if (!scope.empty())
        scope_param = scope;
    auto conn = co_await pool_.acquire();
    co_await conn->execute("BEGIN");
    try {
        auto rs =
            co_await sql(*conn,
                         "INSERT INTO access_keys (access_key_id, user_id, secret_sealed, scope, expires_at) "
                         "SELECT $1, id, $3, $4::jsonb, to_timestamp($5::double precision / 1000) FROM users "
                         "WHERE id = $2 RETURNING " DEPOT_MS("created_at"),
                         access_key_id, user_id, pg::bytes(sealed), scope_param, expires_ms);
        if (!rs.empty()) {
            const std::string scope_text = scope.empty() ? std::string("null") : scope;
            const std::string details =
                "{\"user\":" + audit_quote(user_id) + ",\"scope\":" + scope_text + "}";
            co_await append_audit(*conn, who, "key.create", access_key_id, "", details);
            co_await conn->execute("COMMIT");
            // This process may remember the id as missing; the trigger's notice reaches the others.
            if (cache_)
                cache_->forget_key(access_key_id);
            co_return access_key{.access_key_id = access_key_id,
                                 .user_id = std::string(user_id),
                                 .secret = secret,
                                 .created_at = from_millis(rs[0].i64(0)),
                                 .expires_at = expires_at,
                                 .scope = scope};
        }
    } catch (const pg::error& e) {
        if (e.is_unique_violation())
            co_return make_error(errc::already_exists, "access key id already exists");
        if (e.sqlstate() == "23514")
            co_return make_error(errc::invalid_argument, "access key id must be 3-128 letters and digits");
        throw;
    }
    co_await conn->execute("ROLLBACK");
    co_return make_error(errc::not_found, "no such user");
}

asio::awaitable<result<access_key>> identity_repository::get_key(std::string_view access_key_id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(
        *conn,
        "SELECT user_id, " DEPOT_MS("created_at") ", " DEPOT_MS("expires_at") ", " DEPOT_MS(
            "revoked_at") ", coalesce(scope::text, '') FROM access_keys WHERE access_key_id = $1",
        access_key_id);
    if (rs.empty())
        co_return make_error(errc::not_found, "no such access key");
    co_return access_key{.access_key_id = std::string(access_key_id),
                         .user_id = rs[0].str(0),
                         .created_at = from_millis(rs[0].i64(1)),
                         .expires_at = opt_time(rs[0], 2),
                         .revoked_at = opt_time(rs[0], 3),
                         .scope = rs[0].str(4)};
}

asio::awaitable<result<access_key>> identity_repository::find_active_key(std::string_view access_key_id)
{
    std::uint64_t ticket = 0;
    if (cache_) {
        // Known missing first: a remembered unknown id is a negative hit, not also a miss.
        if (cache_->key_known_missing(access_key_id))
            co_return make_error(errc::not_found, "no such access key");
        if (auto hit = cache_->find_key(access_key_id))
            co_return std::move(*hit);
        ticket = cache_->ticket();
    }
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(
        *conn,
        "SELECT k.user_id, u.display_name, k.secret_sealed, " DEPOT_MS("k.created_at") ", " DEPOT_MS(
            "k.expires_at") ", coalesce(k.scope::text, ''), u.is_admin "
                            "FROM access_keys k JOIN users u ON u.id = k.user_id "
                            "WHERE k.access_key_id = $1 AND k.revoked_at IS NULL "
                            "AND (k.expires_at IS NULL OR k.expires_at > now())",
        access_key_id);
    if (rs.empty()) {
        if (cache_)
            cache_->store_missing_key(ticket, access_key_id);
        co_return make_error(errc::not_found, "no such access key");
    }
    auto r = rs[0];
    auto secret = secret_box::open(server_key_, r.bytea(2), access_key_id);
    if (!secret)
        throw std::runtime_error("cannot unseal the secret of an access key: wrong server key?");
    access_key key{.access_key_id = std::string(access_key_id),
                   .user_id = r.str(0),
                   .user_display_name = r.str(1),
                   .secret = std::move(*secret),
                   .created_at = from_millis(r.i64(3)),
                   .expires_at = opt_time(r, 4),
                   .scope = r.str(5),
                   .user_is_admin = r.boolean(6)};
    if (cache_)
        cache_->store_key(ticket, key);
    co_return key;
}

asio::awaitable<std::vector<access_key>> identity_repository::list_keys(std::string_view user_id)
{
    auto conn = co_await pool_.acquire();
    auto rs = co_await sql(
        *conn,
        "SELECT access_key_id, " DEPOT_MS("created_at") ", " DEPOT_MS("expires_at") ", " DEPOT_MS(
            "revoked_at") ", coalesce(scope::text, '') FROM access_keys WHERE user_id = $1 "
                          "ORDER BY created_at, access_key_id",
        user_id);
    std::vector<access_key> out;
    for (auto r : rs)
        out.push_back(access_key{.access_key_id = r.str(0),
                                 .user_id = std::string(user_id),
                                 .created_at = from_millis(r.i64(1)),
                                 .expires_at = opt_time(r, 2),
                                 .revoked_at = opt_time(r, 3),
                                 .scope = r.str(4)});
    co_return out;
}

asio::awaitable<result<void>> identity_repository::revoke_key(const audit_context& who,
                                                              std::string_view access_key_id)
{
    auto revoked = co_await transact(pool_, [&](pg::connection& c) -> asio::awaitable<result<void>> {
        auto rs = co_await sql(c,
                               "UPDATE access_keys SET revoked_at = now() WHERE access_key_id = $1 AND "
                               "revoked_at IS NULL RETURNING user_id",
                               access_key_id);
        if (rs.empty())
            co_return make_error(errc::not_found, "no such active access key");
        co_await append_audit(c, who, "key.revoke", access_key_id, "",
                              "{\"user\":" + audit_quote(rs[0].text(0)) + "}");
        co_return ok();
    });
    // Committed: this process stops accepting the key now; the trigger's notice tells the others.
    if (revoked && cache_)
        cache_->forget_key(access_key_id);
    co_return revoked;
}

} // namespace depot::registry
